package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// The lease count is stored in the semaphore's node, and a participant
// with another count is refused (ErrInvalidArgument) instead of admitting
// itself beyond the others' count, or waiting for a lease the others would
// never grant; it leaves nothing behind. Data that is not a count is left
// alone, and a kazoo-style count already there is checked.
func TestIntegration_SemaphoreLeaseCountStoredAndChecked(t *testing.T) {
	c := zktest.Start(t)
	admin := c.Connect(t, sessionTimeout)
	s1, s2 := connect(t, c), connect(t, c)
	ctx := ctxTimeout(t, 30*time.Second)
	const path = "/sem/count"

	held, err := newSemaphore(t, s1, path, 2).AcquireN(ctx, 2) // every lease taken
	require.NoError(t, err)
	data, _, err := admin.Get(path)
	require.NoError(t, err)
	assert.Equal(t, "2", string(data), "the count is stored in the semaphore's node")

	for _, tc := range []struct {
		name    string
		acquire func(context.Context) (*zklock.Hold, error)
	}{
		{"more leases: would be admitted as a third holder", newSemaphore(t, s2, path, 3).Acquire},
		{"more leases, try", newSemaphore(t, s2, path, 3).TryAcquire},
		{"fewer leases: would wait for ever", newSemaphore(t, s2, path, 1).Acquire},
		{"a semaphore mutex", newSemMutex(t, s2, path).Lock},
	} {
		h, err := tc.acquire(ctx)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, tc.name)
		require.Nil(t, h, tc.name)
		assert.Contains(t, err.Error(), "the semaphore at /sem/count has 2 leases (stored in its node), this participant ", tc.name)
		// A lease node whose create was in flight when the mismatch ended the
		// acquire is deleted once its reply arrives, as after any cancel.
		require.Eventually(t, func() bool {
			return len(children(t, admin, path+"/leases")) == 2 && len(children(t, admin, path+"/locks")) == 0
		}, 10*time.Second, 10*time.Millisecond, "%s: a node left behind", tc.name)
	}
	releaseAll(t, held)
	h, err := newSemaphore(t, s2, path, 2).Acquire(ctx) // the same count is served
	require.NoError(t, err)
	require.NoError(t, h.Release())

	// A node with someone else's data: neither stored nor checked, untouched.
	_, err = admin.Create("/sem/owned", []byte("team=crawl"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for _, n := range []int{2, 3} {
		h, err := newSemaphore(t, s1, "/sem/owned", n).Acquire(ctx)
		require.NoError(t, err)
		require.NoError(t, h.Release())
	}
	data, _, err = admin.Get("/sem/owned")
	require.NoError(t, err)
	assert.Equal(t, "team=crawl", string(data))

	// A count stored by kazoo (its Semaphore writes str(max_leases) there).
	_, err = admin.Create("/sem/kazoo", []byte("4"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = newSemaphore(t, s1, "/sem/kazoo", 5).Acquire(ctx)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	h, err = newSemaphore(t, s1, "/sem/kazoo", 4).Acquire(ctx)
	require.NoError(t, err)
	require.NoError(t, h.Release())
}

func releaseAll(t *testing.T, holds []*zklock.Hold) {
	t.Helper()
	for _, h := range holds {
		require.NoError(t, h.Release())
	}
}
