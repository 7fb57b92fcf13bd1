//go:build unix

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Integration tests of signals and lock loss while holding.

func TestIntegration_SIGTERMForwardedAndNodeDeleted(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	dir := t.TempDir()
	ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
	script := `trap 'echo TERM > "$1"; exit 5' TERM; echo ready > "$0"; while :; do sleep 0.05; done`
	p := startZklock(t, env, "lock", "fwd", "sh", "-c", script, ready, got)
	waitFile(t, ready)
	require.Len(t, children(t, conn, "/locks/fwd"), 1)

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 5, p.wait(t, 20*time.Second), "want the child's status; stderr:\n%s", p.stderr)
	assert.Equal(t, "TERM\n", waitFile(t, got))
	assert.Empty(t, children(t, conn, "/locks/fwd"), "node left behind")
}

// zklockSession finds the session of the participant holding path.
func zklockSession(t *testing.T, env []string, path string) int64 {
	t.Helper()
	code, stdout, stderr := runZklock(t, env, "status", path, "--json")
	require.Equal(t, exitOK, code, stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &st))
	require.Len(t, st.Participants, 1, stdout)
	sid, err := strconv.ParseUint(strings.TrimPrefix(st.Participants[0].Session, "0x"), 16, 64)
	require.NoError(t, err)
	return int64(sid)
}

func TestIntegration_LockLossSignalsChildExits4(t *testing.T) {
	t.Parallel()
	c, conn, env := zkSetup(t)
	proxy := c.Proxy(t) // so that the harness learns the session's password
	viaProxy := []string{"ZKLOCK_SERVERS=" + proxy.ConnectString(), "ZKLOCK_SESSION_TIMEOUT=2s"}

	t.Run("child stops on SIGTERM", func(t *testing.T) {
		dir := t.TempDir()
		ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
		script := `trap 'echo TERM > "$1"; exit 0' TERM; echo ready > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, viaProxy, "lock", "loss1", "sh", "-c", script, ready, got)
		waitFile(t, ready)
		require.NoError(t, c.Expire(zklockSession(t, env, "loss1")))
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Equal(t, "TERM\n", waitFile(t, got))
		assert.Contains(t, p.stderr.String(), "lock lost")
		assert.Empty(t, children(t, conn, "/locks/loss1"))
	})
	t.Run("child ignoring SIGTERM is killed after --kill-grace", func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "ready")
		// The shell and its sleeps ignore SIGTERM; only SIGKILL, sent to the
		// whole process group, stops them.
		script := `trap '' TERM; echo $$ > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, viaProxy, "--kill-grace", "300ms", "lock", "loss2", "sh", "-c", script, ready)
		pid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, ready)))
		require.NoError(t, err)
		pgid, err := syscall.Getpgid(pid) // on Linux, its supervisor's pid
		require.NoError(t, err)
		require.NoError(t, c.Expire(zklockSession(t, env, "loss2")))
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		// Members killed after the shell are reaped by init, so give it a moment.
		require.Eventually(t, func() bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) },
			10*time.Second, 10*time.Millisecond, "the child's process group outlived zklock")
	})
	t.Run("no CMD", func(t *testing.T) {
		p, _, _ := holder(t, viaProxy, "loss3")
		require.NoError(t, c.Expire(zklockSession(t, env, "loss3")))
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Contains(t, p.stderr.String(), "lock lost")
	})
}

func TestIntegration_NoCMDPrintsNodeAndTokenReleasesOnSIGTERM(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	p, node, token := holder(t, env, "/nocmd/x")
	assert.True(t, strings.HasPrefix(node, "/nocmd/x/_c_"), node)
	assert.Equal(t, czxid(t, conn, node), token)
	assert.Equal(t, fmt.Sprintf("%s %d\n", node, token), p.stdout.String())

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Empty(t, children(t, conn, "/nocmd/x"), "node left behind")
}

// SIGQUIT is handled as SIGTERM is, not by Go's default (dump the
// goroutines, exit 2, CMD left running): forwarded to CMD, whose status
// zklock passes on; with no CMD it releases and exits 0; while waiting it
// ends the wait (exit 3). The node is released every time.
func TestIntegration_SIGQUITHandledAsSIGTERM(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	t.Run("forwarded to CMD", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
		script := `trap 'echo QUIT > "$1"; exit 5' QUIT; echo ready > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, env, "lock", "quit/trapped", "sh", "-c", script, ready, got)
		waitFile(t, ready)
		require.Len(t, children(t, conn, "/locks/quit/trapped"), 1)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGQUIT))
		assert.Equal(t, 5, p.wait(t, 20*time.Second), "want the child's status; stderr:\n%s", p.stderr)
		assert.Equal(t, "QUIT\n", waitFile(t, got))
		assert.NotContains(t, p.stderr.String(), "goroutine ")
		assert.Empty(t, children(t, conn, "/locks/quit/trapped"), "node left behind")
	})
	t.Run("CMD killed by it: 128+3", func(t *testing.T) {
		t.Parallel()
		ready := filepath.Join(t.TempDir(), "ready")
		script := `ulimit -c 0; echo ready > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, env, "lock", "quit/default", "sh", "-c", script, ready)
		waitFile(t, ready)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGQUIT))
		assert.Equal(t, 128+int(syscall.SIGQUIT), p.wait(t, 20*time.Second), p.stderr.String())
		assert.Empty(t, children(t, conn, "/locks/quit/default"), "node left behind")
	})
	t.Run("no CMD: released, exit 0", func(t *testing.T) {
		t.Parallel()
		p, _, _ := holder(t, env, "/quit/nocmd")
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGQUIT))
		assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Empty(t, children(t, conn, "/quit/nocmd"), "node left behind")
	})
	t.Run("while waiting: exit 3", func(t *testing.T) {
		t.Parallel()
		h, _, _ := holder(t, env, "/quit/wait")
		marker := filepath.Join(t.TempDir(), "ran")
		p := startZklock(t, env, "lock", "/quit/wait", "sh", "-c", `touch "$0"`, marker)
		waitChildren(t, conn, "/quit/wait", 2)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGQUIT))
		assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Contains(t, p.stderr.String(), "interrupted by SIGQUIT")
		assert.NoFileExists(t, marker)
		assert.Len(t, children(t, conn, "/quit/wait"), 1, "the waiter left its node")
		require.NoError(t, h.cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, exitOK, h.wait(t, 20*time.Second), h.stderr.String())
	})
}
