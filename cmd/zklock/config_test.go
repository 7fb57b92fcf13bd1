//go:build unix

package main

import (
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replyingAddr returns the address of a loopback server that reads each
// connection's first frame (the ConnectRequest) and answers reply.
func replyingAddr(t *testing.T, reply []byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				var n [4]byte
				if _, err := io.ReadFull(c, n[:]); err == nil {
					if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(n[:]))); err == nil {
						_, _ = c.Write(reply)
					}
				}
				<-done
			})
		}
	})
	t.Cleanup(func() {
		l.Close()
		close(done)
		wg.Wait()
	})
	return l.Addr().String()
}

// Configuration errors never pass for an unreachable ZooKeeper, so
// --on-unreachable run never runs CMD on them: a session timeout out of
// range and a server address that is not host:port exit 2 before anything
// connects; a server that is not ZooKeeper exits 1, CMD not run.
func TestCLIConfigurationErrorsNeverRunUnlocked(t *testing.T) {
	t.Parallel()
	http := replyingAddr(t, []byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
	huge := replyingAddr(t, []byte{0xff, 0xff, 0xff, 0xff})
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
