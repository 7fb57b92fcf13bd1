package zklock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// watchesOf returns the paths session sid watches on the (single) server,
// from the wchc four-letter word.
func watchesOf(t *testing.T, c *zktest.Cluster, sid int64) []string {
	t.Helper()
	out, err := c.FourLetter(0, "wchc")
	require.NoError(t, err)
	var paths []string
	mine := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			mine = strings.TrimSpace(line) == fmt.Sprintf("0x%x", sid)
		case mine && strings.TrimSpace(line) != "":
			paths = append(paths, strings.TrimSpace(line))
		}
	}
	return paths
}

// The observer reports each of several leaders in order, with one watch at
// a time: on the leader's node while someone leads, on the directory when
// no one does; its channel closes with its context or its session.
func TestIntegration_ObserveElection(t *testing.T) {
	c := zktest.Start(t)
	const path = "/election/observe"
	ctx := ctxTimeout(t, time.Minute)
	watcher := connect(t, c)
	oe, err := zklock.NewLeaderElection(watcher, path, "observer")
	require.NoError(t, err)
	obsCtx, stopObs := context.WithCancel(ctx)
	defer stopObs()
	obs := oe.Observe(obsCtx)
	p := <-obs
	require.Empty(t, p.Node, "no leader yet")

	ids := []string{"A", "B", "C", "D"}
	holds := make(chan *zklock.Hold, len(ids))
	errs := make(chan error, len(ids))
	for i, id := range ids {
		e, err := zklock.NewLeaderElection(connect(t, c), path, id)
		require.NoError(t, err)
		go func() {
			h, err := e.Campaign(ctx)
			if err != nil {
				errs <- err
				return
			}
			holds <- h
		}()
		require.Eventually(t, func() bool {
			ps, err := oe.Participants(ctx)
			return err == nil && len(ps) == i+1
		}, 20*time.Second, 5*time.Millisecond)
	}
	for i, id := range ids { // A, then three changes of leader
		var h *zklock.Hold
		select {
		case h = <-holds:
		case err := <-errs:
			t.Fatal(err)
		case <-ctx.Done():
			t.Fatalf("%s did not lead", id)
		}
		l := nextLeaderOf(t, obs, id)
		require.Equal(t, h.Node(), l.Path)
		require.Equal(t, h.Token(), l.Token)
		require.True(t, l.Holds)
		require.Eventually(t, func() bool {
			w := watchesOf(t, c, watcher.ID())
			return len(w) == 1 && w[0] == h.Node()
		}, 10*time.Second, 10*time.Millisecond, "the observer watches only the leader's node (leader %d)", i)
		if i == 0 {
			// A data change on the leader's node (a revocation request) is
			// no change of leader: the observer watches it again, and the
			// next value is the next leader.
			require.NoError(t, zklock.Revoke(ctx, watcher, h.Node()))
		}
		require.NoError(t, h.Release())
	}
	p = <-obs
	require.Empty(t, p.Node, "no leader after the last one")
	require.Eventually(t, func() bool {
		w := watchesOf(t, c, watcher.ID())
		return len(w) == 1 && w[0] == path
	}, 10*time.Second, 10*time.Millisecond, "with no leader, the observer watches the directory")

	// A second observer whose session closes: its channel closes too.
	s2 := connect(t, c)
	obs2, err := zklock.ObserveLeader(ctx, s2, path)
	require.NoError(t, err)
	<-obs2
	require.NoError(t, s2.Close())
	select {
	case _, ok := <-obs2:
		require.False(t, ok)
	case <-ctx.Done():
		t.Fatal("observer not closed with its session")
	}
	stopObs()
	for range obs {
	}
}

func nextLeaderOf(t *testing.T, obs <-chan zklock.Participant, want string) zklock.Participant {
	t.Helper()
	select {
	case p, ok := <-obs:
		require.True(t, ok, "observer closed")
		require.Equal(t, want, p.ID(), "observed %s", p.Path)
		return p
	case <-time.After(20 * time.Second):
		t.Fatalf("observer did not report %s", want)
	}
	return zklock.Participant{}
}

// A reader that does not read does not hold the observer back: leaders
// change while nobody reads, and the next value read is, at the latest
// soon after, the current leader (latest-value semantics).
func TestIntegration_ObserveSlowReader(t *testing.T) {
	c := zktest.Start(t)
	const path = "/latch/observe-slow"
	ctx := ctxTimeout(t, time.Minute)
	watcher := connect(t, c)
	ol := newLatch(t, watcher, path, "observer")
	obs := ol.Observe(ctx)

	var latches []*zklock.LeaderLatch
	for _, id := range []string{"A", "B", "C", "D"} {
		l := newLatch(t, connect(t, c), path, id)
		require.NoError(t, l.Start(ctx))
		latches = append(latches, l)
		waitLatchIDs(t, ol, []string{"A", "B", "C", "D"}[:len(latches)]...)
	}
	for _, l := range latches[:3] { // three changes, nobody reading
		require.NoError(t, l.Close())
	}
	h, err := latches[3].Await(ctx)
	require.NoError(t, err)
	// Once the observer watches D's node it has seen every change: a
	// blocked sender would still be offering its first value.
	require.Eventually(t, func() bool {
		w := watchesOf(t, c, watcher.ID())
		return len(w) == 1 && w[0] == h.Node()
	}, 20*time.Second, 5*time.Millisecond, "the observer did not follow the changes while nobody read")
	p := nextLeaderOf(t, obs, "D")
	require.Equal(t, h.Node(), p.Path, "the first value read is the latest leader")
	require.NoError(t, latches[3].Close())
	p = <-obs
	require.Empty(t, p.Node, "then no leader")
}
