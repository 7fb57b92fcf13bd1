//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

// `zklock semaphore PATH --leases 2`: two holders at once, a third is
// refused (--try, --timeout) and leaves nothing behind, and a freed lease
// goes to the next one, whose child sees its lease node and token.
func TestIntegration_SemaphoreVerb(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	var holders []*proc
	for range 2 {
		p := startZklock(t, env, "semaphore", "sem", "--leases", "2")
		node, tok, ok := strings.Cut(p.firstLine(t), " ")
		require.True(t, ok, p.stderr.String())
		require.Regexp(t, `^/locks/sem/leases/_c_[0-9a-f-]{36}-lease-\d{10}$`, node)
		token, err := strconv.ParseInt(tok, 10, 64)
		require.NoError(t, err)
		require.Equal(t, czxid(t, conn, node), token)
		holders = append(holders, p)
	}
	code, _, stderr := runZklock(t, env, "--try", "semaphore", "sem", "--leases", "2", "true")
	assert.Equal(t, exitNotAcquired, code, stderr)
	code, _, stderr = runZklock(t, env, "--timeout", "300ms", "semaphore", "sem", "--leases", "2", "true")
	assert.Equal(t, exitNotAcquired, code, stderr)
	assert.Len(t, children(t, conn, "/locks/sem/leases"), 2, "the refused ones left no lease")
	assert.Empty(t, children(t, conn, "/locks/sem/locks"), "nor an internal lock node")

	waiter := startZklock(t, env, "semaphore", "sem", "--leases", "2", "sh", "-c", `echo "$ZKLOCK_NODE $ZKLOCK_FENCING_TOKEN"`)
	waitChildren(t, conn, "/locks/sem/leases", 3)
	require.NoError(t, holders[0].cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, holders[0].wait(t, 20*time.Second), holders[0].stderr.String())
	assert.Equal(t, exitOK, waiter.wait(t, 20*time.Second), waiter.stderr.String())
	node, tok, ok := strings.Cut(strings.TrimSpace(waiter.stdout.String()), " ")
	require.True(t, ok, waiter.stdout.String())
	assert.Regexp(t, `^/locks/sem/leases/_c_[0-9a-f-]{36}-lease-\d{10}$`, node)
	_, err := strconv.ParseInt(tok, 10, 64)
	assert.NoError(t, err)

	// Another N on the same path while leases are held: refused (exit 2),
	// not a third holder, and CMD does not run.
	ran := filepath.Join(t.TempDir(), "ran")
	code, _, stderr = runZklock(t, env, "semaphore", "sem", "--leases", "3", "touch", ran)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "the semaphore at /locks/sem has 2 leases (stored in its node), this participant 3")
	assert.NoFileExists(t, ran)

	require.NoError(t, holders[1].cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, holders[1].wait(t, 20*time.Second))
	assert.Empty(t, children(t, conn, "/locks/sem/leases"))
}

// `zklock revoke NODE` reaches a revocable holder; a missing node is
// reported but is not an error.
func TestIntegration_RevokeVerb(t *testing.T) {
	t.Parallel()
	c, _, env := zkSetup(t)
	s, err := zklock.Connect(c.Servers(), zklock.WithSessionTimeout(zkSessionTimeout))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	m, err := zklock.NewMutex(s, "/locks/rev", zklock.WithRevocable())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := m.Lock(ctx)
	require.NoError(t, err)
	select {
	case <-h.Revoked():
		t.Fatal("revoked before anyone asked")
	default:
	}

	code, stdout, stderr := runZklock(t, env, "revoke", h.Node())
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	select {
	case <-h.Revoked():
	case <-time.After(20 * time.Second):
		t.Fatal("the holder was not asked to release")
	}
	require.NoError(t, h.Err(), "revocation is advisory")
	require.NoError(t, h.Release())

	code, _, stderr = runZklock(t, env, "revoke", h.Node())
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "does not exist")
}

// A holder taken with --revocable ends its child on a revocation request as
// on a loss (SIGTERM, exit 4), and without CMD releases and exits 4; the
// node is gone either way. Without --revocable the request is ignored.
func TestIntegration_RevocableHolder(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)

	t.Run("child", func(t *testing.T) {
		dir := t.TempDir()
		ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
		script := `trap 'echo TERM > "$1"; exit 0' TERM; echo ready > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, env, "lock", "rv", "--revocable", "sh", "-c", script, ready, got)
		waitFile(t, ready)
		node := "/locks/rv/" + children(t, conn, "/locks/rv")[0]
		data, _, err := conn.Get(node)
		require.NoError(t, err)
		assert.Empty(t, data, "a revocable node stores empty data")
		code, _, stderr := runZklock(t, env, "revoke", node)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Equal(t, "TERM\n", waitFile(t, got))
		assert.Contains(t, p.stderr.String(), "revocation requested")
		assert.Empty(t, children(t, conn, "/locks/rv"))
	})
	t.Run("no CMD", func(t *testing.T) {
		p := startZklock(t, env, "semaphore", "rv-sem", "--leases", "1", "--revocable")
		node, _, ok := strings.Cut(p.firstLine(t), " ")
		require.True(t, ok)
		code, _, stderr := runZklock(t, env, "revoke", node)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Empty(t, children(t, conn, "/locks/rv-sem/leases"))
	})
	t.Run("not revocable", func(t *testing.T) {
		p := startZklock(t, env, "semaphore", "rv-plain", "--leases", "1")
		node, _, ok := strings.Cut(p.firstLine(t), " ")
		require.True(t, ok)
		code, _, stderr := runZklock(t, env, "revoke", node)
		require.Equal(t, exitOK, code, stderr)
		// Still held: a second holder is refused.
		code, _, stderr = runZklock(t, env, "--try", "semaphore", "rv-plain", "--leases", "1", "true")
		assert.Equal(t, exitNotAcquired, code, stderr)
		assert.False(t, p.exited())
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	})
}
