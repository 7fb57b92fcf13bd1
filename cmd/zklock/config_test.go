//go:build unix

package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/zklock/zklock/internal/badpeer"
)

// Configuration errors never pass for an unreachable ZooKeeper, so
// --on-unreachable run never runs CMD on them: a session timeout out of
// range and a server address that is not host:port exit 2 before anything
// connects; a server that is not ZooKeeper exits 1, CMD not run.
func TestCLIConfigurationErrorsNeverRunUnlocked(t *testing.T) {
	t.Parallel()
	http := badpeer.Replying(t, badpeer.HTTP400)
	huge := badpeer.Replying(t, []byte{0xff, 0xff, 0xff, 0xff})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"500us", []string{"--session-timeout", "500us"}, exitUsage, "invalid --session-timeout"},
		{"600h", []string{"--session-timeout", "600h"}, exitUsage, "want 100ms to 596h31m23.647s"},
		{"no port", []string{"--servers", ";rm -rf /"}, exitUsage, "neither an IP address nor a host name"},
		{"bidi host", []string{"--servers", "zk1\u202e:2181"}, exitUsage, "invalid --servers"},
		{"http", []string{"--servers", http}, exitError, "not a ZooKeeper server"},
		{"4 GiB", []string{"--servers", huge}, exitError, "not a ZooKeeper server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			args := append([]string{"--servers", deadAddr(t), "--on-unreachable", "run", "--timeout", "2s"}, tt.args...)
			p := startZklock(t, nil, append(args, "lock", "cfg", "sh", "-c", `touch "$0"`, marker)...)
			code := p.wait(t, 20*time.Second)
			assert.Equal(t, tt.code, code, p.stderr.String())
			assert.Contains(t, p.stderr.String(), tt.want)
			assert.NotContains(t, p.stderr.String(), "WITHOUT the lock")
			assert.NoFileExists(t, marker, "CMD ran")
			if tt.code == exitUsage {
				assert.Less(t, p.dur, time.Second, "a usage error is found before connecting")
			}
		})
	}
}
