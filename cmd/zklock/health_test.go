//go:build unix

package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"elect", "--latch", "--health-cmd", "true", "p"},
		{"elect", "--observe", "--health-cmd", "true", "p"},
		{"elect", "--health-cmd", "true", "--health-interval", "0s", "p"},
		{"elect", "--health-cmd", "true", "--health-failures", "0", "p"},
	} {
		code, _, stderr := runZklock(t, []string{"ZKLOCK_SERVERS=" + deadAddr(t)}, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
	}
}

// TestIntegration_ElectHealthCmd: a leader whose --health-cmd starts
// failing says so on /healthz (200, "leader but unhealthy") and /leader
// (503), stops its CMD, resigns within interval × failures plus a handover,
// and campaigns again once its check passes; the healthy standby takes over.
func TestIntegration_ElectHealthCmd(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "a.bad")
	const interval, failures = 300 * time.Millisecond, 3
	health := func(id, addr, check string) []string {
		return []string{"-v", "elect", "hc", "--id", id, "--http", addr, "--health-cmd", check,
			"--health-interval", interval.String(), "--health-failures", "3"}
	}
	addrA, addrB := deadAddr(t), deadAddr(t)
	a := startZklock(t, env, append(health("a", addrA, "test ! -e "+bad),
		"--", "sh", "-c", `echo "a $ZKLOCK_FENCING_TOKEN"; trap 'echo a-stopped; exit 0' TERM; while :; do sleep 0.05; done`)...)
	require.True(t, strings.HasPrefix(a.firstLine(t), "a "))
	b := startZklock(t, env, health("b", addrB, "true")...)
	waitChildren(t, conn, "/locks/hc", 2)
	a.waitStderr(t, "zklock: serving")
	b.waitStderr(t, "zklock: serving")
	code, body := get(t, addrA, "/healthz", "")
	require.Equal(t, http.StatusOK, code, body)
	require.NotContains(t, body, "unhealthy")
	code, _ = get(t, addrA, "/leader", "")
	require.Equal(t, http.StatusOK, code)

	require.NoError(t, os.WriteFile(bad, nil, 0o600))
	flipped := time.Now()
	// Between the first failure and the last, A leads but says it is unhealthy.
	var seen bool
	require.Eventually(t, func() bool {
		code, body := get(t, addrA, "/healthz", "")
		lcode, lbody := get(t, addrA, "/leader", "")
		if code == http.StatusOK && strings.Contains(body, "leader but unhealthy") {
			assert.Equal(t, http.StatusServiceUnavailable, lcode, lbody)
			assert.Contains(t, lbody, "unhealthy")
			seen = true
		}
		return seen || strings.Contains(b.stdout.String(), "\n")
	}, 20*time.Second, 10*time.Millisecond)
	require.True(t, seen, "/healthz never said leader but unhealthy")

	line := b.firstLine(t)
	took := time.Since(flipped)
	t.Logf("elect --health-cmd: leader replaced %v after its check started failing (interval %v × %d; B: %s)",
		took.Round(time.Millisecond), interval, failures, line)
	assert.Less(t, took, interval*(failures+1)+2*time.Second)
	assert.Contains(t, a.stdout.String(), "a-stopped", "the unhealthy leader's CMD was stopped")
	assert.Contains(t, a.stderr.String(), "--health-cmd failing")
	assert.False(t, a.exited(), "the unhealthy leader campaigns again: %s", a.stderr)

	code, body = get(t, addrA, "/healthz", "")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "standby but unhealthy")
	assert.Len(t, children(t, conn, "/locks/hc"), 1, "an unhealthy candidate does not campaign")

	require.NoError(t, os.Remove(bad))
	waitChildren(t, conn, "/locks/hc", 2)
	for _, p := range []*proc{a, b} {
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		p.wait(t, 20*time.Second)
	}
}
