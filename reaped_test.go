package zklock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// ZooKeeper 3.10 reaps a CONTAINER that never had a child after five
// minutes (ZOOKEEPER-4915), and every release reaps one whose last child
// went: a lock directory can vanish between its creation and a later
// read. Every reader of a lock directory takes its absence for an empty
// lock, on every server release.
func TestIntegration_ReapedDirectoryReadsEmpty(t *testing.T) {
	c := zktest.Start(t, zktest.WithContainerCheckInterval(time.Hour)) // the test reaps, not the server
	s := connect(t, c)
	admin := c.Connect(t, 10*time.Second)
	ctx := ctxTimeout(t, 30*time.Second)

	// Made by the recipes, then emptied and deleted underneath them.
	h, err := newMutex(t, s, "/reaped/m").Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, h.Release())
	l := newLatch(t, s, "/reaped/l", "a")
	obs, err := zklock.ObserveLeader(ctx, s, "/reaped/l")
	require.NoError(t, err)
	require.NoError(t, l.Start(ctx))
	awaitLeader(t, obs, "a")
	require.NoError(t, l.Close())
	for _, p := range []string{"/reaped/m", "/reaped/l"} {
		require.NoError(t, admin.Delete(p, -1), p)
	}

	for _, path := range []string{"/reaped/m", "/reaped/l", "/reaped/never"} {
		ps, err := zklock.Participants(ctx, s, path)
		require.NoError(t, err, path)
		require.Empty(t, ps, path)
	}
	l2 := newLatch(t, s, "/reaped/l", "b")
	ps, err := l2.Participants(ctx)
	require.NoError(t, err, "a latch before it enters")
	require.Empty(t, ps)
	_, err = l2.Leader(ctx)
	require.ErrorIs(t, err, zklock.ErrNoLeader)

	// The observer waits for the directory to come back, then reports
	// the leader of the new one.
	require.NoError(t, l2.Start(ctx))
	awaitLeader(t, obs, "b")
	h, err = newMutex(t, s, "/reaped/m").Lock(ctx)
	require.NoError(t, err, "the lock re-creates its directory")
	require.NoError(t, h.Release())
}

// A latch whose node and directory are deleted while it is cut off from
// ZooKeeper lists again once it is back, re-creates the directory and
// enters anew, instead of stalling (Curator's CURATOR-724, fixed in 5.8).
func TestIntegration_LatchDirectoryGoneWhileSuspended(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithContainerCheckInterval(time.Hour))
	px := c.Proxy(t)
	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(px.Dialer()), zklock.WithSessionTimeout(4*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	admin := c.Connect(t, 10*time.Second)
	ctx := ctxTimeout(t, 60*time.Second)

	l := newLatch(t, s, "/latchgone/l", "a")
	require.NoError(t, l.Start(ctx))
	first, err := l.Await(ctx)
	require.NoError(t, err)

	px.Blackhole()
	require.Eventually(t, func() bool { return s.State() != zklock.StateConnected }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, admin.Delete(first.Node(), -1))
	require.NoError(t, admin.Delete("/latchgone/l", -1))
	px.Heal()

	<-first.Done()
	require.Eventually(t, func() bool {
		children, _, err := admin.Children("/latchgone/l")
		return err == nil && len(children) == 1 && l.HasLeadership()
	}, 20*time.Second, 10*time.Millisecond, "the latch re-created its directory and leads again")
	again, err := l.Await(ctx)
	require.NoError(t, err)
	require.Greater(t, again.Token(), first.Token())
	ok, _, err := admin.Exists(again.Node())
	require.NoError(t, err)
	require.True(t, ok)
}

// awaitLeader reads the observer until it reports the leader with id want,
// past any other report (no leader, an earlier one).
func awaitLeader(t *testing.T, obs <-chan zklock.Participant, want string) {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	for {
		select {
		case p, ok := <-obs:
			require.True(t, ok, "observer closed")
			if p.ID() == want {
				return
			}
		case <-timer.C:
			t.Fatalf("observer did not report %s", want)
		}
	}
}
