//go:build unix

package main

import (
	"context"
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
