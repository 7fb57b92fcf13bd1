package zklock_test

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

var latchNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-latch-[0-9]{10}$`)

func newLatch(t *testing.T, s *zklock.Session, path, id string) *zklock.LeaderLatch {
	t.Helper()
	l, err := zklock.NewLeaderLatch(s, path, id)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// ids returns the latch's participants' ids, in queue order.
func latchIDs(t *testing.T, l *zklock.LeaderLatch) []string {
	t.Helper()
	ps, err := l.Participants(context.Background())
	require.NoError(t, err)
	var ids []string
	for _, p := range ps {
		ids = append(ids, p.ID())
	}
	return ids
}

func waitLatchIDs(t *testing.T, l *zklock.LeaderLatch, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool {
		ps, err := l.Participants(context.Background())
		if err != nil || len(ps) != len(want) {
			return false
		}
		for i := range ps {
			if ps[i].ID() != want[i] {
				return false
			}
		}
		return true
	}, 20*time.Second, 5*time.Millisecond, "want participants %v", want)
}

// nextLeader reads the observer until it reports a leader with id want.
func nextLeader(t *testing.T, obs <-chan zklock.Participant, want string) zklock.Participant {
	t.Helper()
	timer := time.NewTimer(20 * time.Second)
	defer timer.Stop()
	select {
	case p, ok := <-obs:
		require.True(t, ok, "observer closed")
		require.Equal(t, want, p.ID(), "observed leader %s", p.Path)
		return p
	case <-timer.C:
		t.Fatalf("observer did not report %s", want)
	}
	return zklock.Participant{}
}

// Curator LeaderLatches and ours on one path never lead at once and hand
// leadership over both ways: our session closed while leading, the Curator
// process killed while leading, our latch closed, Curator's latch closed.
func TestIntegration_LeaderLatchCurator(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		const path = "/latch/curator"
		ctx := ctxTimeout(t, 2*time.Minute)
		watcher := connect(t, c)
		obsCtx, stopObs := context.WithCancel(ctx)
		defer stopObs()
		observerLatch := newLatch(t, watcher, path, "never-started")
		obs := observerLatch.Observe(obsCtx)
		first := <-obs
		require.Empty(t, first.Node, "no leader yet")

		// go-A leads; its node is Curator's latch node, its token the czxid.
		sA := connect(t, c, zklock.WithLossLimit(0))
		a := newLatch(t, sA, path, "go-A")
		require.False(t, a.HasLeadership())
		require.NoError(t, a.Start(ctx))
		hA, err := a.Await(ctx)
		require.NoError(t, err)
		require.True(t, a.HasLeadership())
		ps, err := a.Participants(ctx)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.Regexp(t, latchNode, ps[0].Node)
		require.Equal(t, zklock.KindLatch, ps[0].Kind)
		require.Equal(t, hA.Node(), ps[0].Path)
		require.Equal(t, hA.Token(), ps[0].Token, "the token is the node's czxid")
		require.Equal(t, "go-A", string(ps[0].Data))
		require.Equal(t, hA.Node(), nextLeader(t, obs, "go-A").Path)

		// Curator joins behind go-A and agrees on the leader.
		cur := g.Curator(t, c.ConnectString(), sessionTimeout)
		cur.Must(t, "latch C1 "+path+" curator-1")
		waitLatchIDs(t, a, "go-A", "curator-1")
		require.Equal(t, "go-A,curator-1", cur.Must(t, "participants C1"))
		require.Equal(t, "go-A", cur.Must(t, "leaderid C1"))
		require.Equal(t, "false", cur.Must(t, "haslatch C1"))

		require.Empty(t, cur.Buffered(), "Curator led while go-A did")

		// Our session closes while leading: our term ends at once, Curator leads.
		require.NoError(t, sA.Close())
		require.ErrorIs(t, hA.Err(), zklock.ErrLost, "the term ended with the session")
		ev, err := cur.WaitEvent(ctxTimeout(t, 20*time.Second), "C1", "leader")
		require.NoError(t, err)
		require.Equal(t, ev.Arg, nextLeader(t, obs, "curator-1").Path, "Curator's latch path is the observed leader's")
		_, err = a.Await(ctx)
		require.ErrorIs(t, err, zklock.ErrClosed)
		require.NoError(t, a.Close())

		// go-B queues behind Curator, which is killed while leading: go-B leads
		// once Curator's session has expired.
		sB := connect(t, c, zklock.WithLossLimit(0))
		b := newLatch(t, sB, path, "go-B")
		require.NoError(t, b.Start(ctx))
		waitLatchIDs(t, b, "curator-1", "go-B")
		require.False(t, b.HasLeadership(), "go-B leads while Curator does")
		cur.Kill()
		hB, err := b.Await(ctx)
		require.NoError(t, err)
		require.Greater(t, hB.Token(), hA.Token())
		require.Equal(t, hB.Node(), nextLeader(t, obs, "go-B").Path)

		// A new Curator latch queues behind go-B; go-B closes; Curator leads,
		// after go-B's term ended.
		cur2 := g.Curator(t, c.ConnectString(), sessionTimeout)
		cur2.Must(t, "latch C2 "+path+" curator-2")
		waitLatchIDs(t, b, "go-B", "curator-2")
		require.Equal(t, "go-B", cur2.Must(t, "leaderid C2"))
		require.Empty(t, cur2.Buffered(), "Curator led while go-B did")
		require.NoError(t, b.Close())
		require.ErrorIs(t, hB.Err(), zklock.ErrReleased)
		require.False(t, b.HasLeadership())
		_, err = cur2.WaitEvent(ctxTimeout(t, 20*time.Second), "C2", "leader")
		require.NoError(t, err)
		nextLeader(t, obs, "curator-2")

		// go-C queues behind Curator, whose latch is closed: go-C leads.
		sC := connect(t, c, zklock.WithLossLimit(0))
		cl := newLatch(t, sC, path, "go-C")
		require.NoError(t, cl.Start(ctx))
		waitLatchIDs(t, cl, "curator-2", "go-C")
		require.False(t, cl.HasLeadership())
		cur2.Must(t, "closelatch C2")
		hC, err := cl.Await(ctx)
		require.NoError(t, err)
		require.Greater(t, hC.Token(), hB.Token())
		nextLeader(t, obs, "go-C")
		require.NoError(t, cl.Close())
		p := <-obs
		require.Empty(t, p.Node, "no leader after the last latch closed")

		// Nothing left behind; the observer's channel closes with its context.
		require.Empty(t, children(t, watcher.Conn(), path))
		stopObs()
		for range obs {
		}
	})
}

// After its session expires, a leading latch rejoins at the back of the
// queue, as Curator's does, and leads again later with a greater token.
func TestIntegration_LeaderLatchRejoins(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	const path = "/latch/rejoin"
	ctx := ctxTimeout(t, time.Minute)
	sA, sD := connect(t, c), connect(t, c)
	a, d := newLatch(t, sA, path, "A"), newLatch(t, sD, path, "D")
	require.NoError(t, a.Start(ctx))
	h1, err := a.Await(ctx)
	require.NoError(t, err)
	require.NoError(t, d.Start(ctx))
	waitLatchIDs(t, d, "A", "D")

	require.NoError(t, c.Expire(h1.SessionID()))
	<-h1.Done()
	require.ErrorIs(t, h1.Err(), zklock.ErrLost)
	hD, err := d.Await(ctx)
	require.NoError(t, err)
	waitLatchIDs(t, d, "D", "A") // A joined again, behind D
	require.False(t, a.HasLeadership())

	require.NoError(t, d.Close())
	require.ErrorIs(t, hD.Err(), zklock.ErrReleased)
	h2, err := a.Await(ctx)
	require.NoError(t, err)
	require.NotEqual(t, h1.Node(), h2.Node())
	require.Greater(t, h2.Token(), hD.Token())
	require.Greater(t, hD.Token(), h1.Token())

	// The context given to Start ends: the latch leaves the queue.
	sctx, cancel := context.WithCancel(ctx)
	e := newLatch(t, sD, path, "E")
	require.NoError(t, e.Start(sctx))
	waitLatchIDs(t, a, "A", "E")
	cancel()
	_, err = e.Await(ctx)
	require.ErrorIs(t, err, zklock.ErrLatchClosed)
	require.ErrorIs(t, err, context.Canceled)
	waitLatchIDs(t, a, "A")
	require.NoError(t, a.Close())
	require.Empty(t, children(t, sD.Conn(), path))
}

func TestLeaderLatchMisuse(t *testing.T) {
	_, err := zklock.NewLeaderLatch(nil, "/x", "id")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	s, err := zklock.Connect([]string{"127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	for _, p := range []string{"", "x", "/x/", "/"} {
		_, err = zklock.NewLeaderLatch(s, p, "id")
		require.ErrorIs(t, err, zklock.ErrInvalidPath, "%q", p)
	}
	l, err := zklock.NewLeaderLatch(s, "/x", "id")
	require.NoError(t, err)
	_, err = l.Await(context.Background())
	require.ErrorIs(t, err, zklock.ErrInvalidArgument, "Await before Start")
	require.ErrorIs(t, l.Start(nil), zklock.ErrInvalidArgument)
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, l.Start(ctx))
	require.ErrorIs(t, l.Start(ctx), zklock.ErrRunning)
	wctx, wcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer wcancel()
	_, err = l.Await(wctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "no server: not leading")
	cancel()
	require.NoError(t, l.Close())
	require.NoError(t, l.Close())
	_, err = l.Await(context.Background())
	require.ErrorIs(t, err, zklock.ErrLatchClosed)
	require.ErrorIs(t, l.Start(context.Background()), zklock.ErrLatchClosed)

	closed, err := zklock.NewLeaderLatch(s, "/y", "id")
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	require.ErrorIs(t, closed.Start(context.Background()), zklock.ErrLatchClosed)
	_, ok := <-closed.Observe(nil)
	require.False(t, ok, "Observe(nil) gives a closed channel")
	_, err = zklock.ObserveLeader(nil, s, "/x")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.ObserveLeader(context.Background(), nil, "/x")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.ObserveLeader(context.Background(), s, "x/")
	require.ErrorIs(t, err, zklock.ErrInvalidPath)
}
