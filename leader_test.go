package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// handoffBound is the stated bound on a leadership handoff: a new leader's
// term starts within it after the old leader's session or term ends (after
// a resignation, a closed session or a server-side expiry, from the call;
// after a kill, from the kill plus the session timeout).
const handoffBound = time.Second

// term is one leadership term, stamped on the test process's monotonic clock.
type term struct {
	who     string
	token   int64
	start   time.Time
	end     time.Time
	ctx     context.Context
	elec    *zklock.LeaderElection
	session int64
	slot    *slot
	peerLog []peers.Event // a Curator peer's unconsumed events when the term started
}

// recorder records every term of every candidate on one timeline and checks,
// as each term starts, that every earlier term's context is already
// cancelled: never two leaders whose contexts are live at once.
type recorder struct {
	mu       sync.Mutex
	terms    []*term
	problems []string
	started  chan *term
	peer     *peers.Peer
}

func newRecorder() *recorder { return &recorder{started: make(chan *term, 1024)} }

func (r *recorder) problem(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

// lead is the function the candidates run while leader.
func (r *recorder) lead(who string, e *zklock.LeaderElection, s *zklock.Session, sl *slot) func(context.Context, *zklock.Leadership) error {
	return func(ctx context.Context, l *zklock.Leadership) error {
		r.mu.Lock()
		for _, o := range r.terms {
			if o.ctx.Err() == nil {
				r.problems = append(r.problems, fmt.Sprintf("%s started (token %d) while %s (token %d) was live", who, l.Token(), o.who, o.token))
			}
		}
		tm := &term{who: who, token: l.Token(), start: time.Now(), ctx: ctx, elec: e, session: l.Hold().SessionID(), slot: sl}
		if r.peer != nil {
			tm.peerLog = r.peer.Buffered()
		}
		r.terms = append(r.terms, tm)
		r.mu.Unlock()
		// CURATOR-696: the node is owned by the session's current session.
		if ok, stat, err := s.Conn().Exists(l.Hold().Node()); err == nil && (!ok || stat.EphemeralOwner != s.ID()) {
			r.problem("%s leads with node %s not owned by its current session", who, l.Hold().Node())
		}
		r.started <- tm
		<-ctx.Done()
		r.mu.Lock()
		tm.end = time.Now()
		r.mu.Unlock()
		return nil
	}
}

func (r *recorder) next(t *testing.T, d time.Duration) *term {
	t.Helper()
	select {
	case tm := <-r.started:
		return tm
	case <-time.After(d):
		t.Fatalf("no new leader within %v", d)
		return nil
	}
}

// slot is one "process": a session through its own proxy (so it can be
// killed: a blackholed client is, to the server, a process that died) with
// two candidates.
type slot struct {
	name  string
	proxy *zktest.Proxy
	s     *zklock.Session
	stop  context.CancelFunc
	runs  sync.WaitGroup
	errs  chan error
}

func startSlot(t *testing.T, c *zktest.Cluster, r *recorder, path, name string) *slot {
	t.Helper()
	sl := &slot{name: name, proxy: c.Proxy(t), errs: make(chan error, 2)}
	// Loss limit 0: a term ends the moment the connection drops, so a
	// server-side expiry (which drops the connection first) never leaves
	// the old leader live.
	sl.s = connect(t, c, zklock.WithDialer(sl.proxy.Dialer()), zklock.WithLossLimit(0))
	ctx, cancel := context.WithCancel(context.Background())
	sl.stop = cancel
	for i := range 2 {
		who := fmt.Sprintf("%s/%d", name, i)
		e, err := zklock.NewLeaderElection(sl.s, path, who, zklock.WithRequeue())
		require.NoError(t, err)
		sl.runs.Go(func() { sl.errs <- e.Run(ctx, r.lead(who, e, sl.s, sl)) })
	}
	t.Cleanup(func() { sl.close(t) })
	return sl
}

// close ends the slot's candidates (closing the session) and checks why
// their Runs returned.
func (sl *slot) close(t *testing.T) {
	if sl.stop == nil {
		return
	}
	sl.stop()
	sl.stop = nil
	_ = sl.s.Close()
	sl.runs.Wait()
	for range 2 {
		err := <-sl.errs
		if !errors.Is(err, context.Canceled) && !errors.Is(err, zklock.ErrClosed) {
			t.Errorf("%s: Run returned %v", sl.name, err)
		}
	}
}

func TestIntegration_LeaderChurn(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	r := newRecorder()
	const path = "/election/churn"
	slots := make([]*slot, 4) // 4 sessions x 2 candidates = 8 candidates
	gen := 0
	for i := range slots {
		slots[i] = startSlot(t, c, r, path, fmt.Sprintf("p%d", gen))
		gen++
	}
	actions := []string{"resign", "expire", "resign", "kill", "resign", "close"}
	const changes = 24
	cur := r.next(t, 20*time.Second)
	latency := map[string]time.Duration{}
	for i := range changes {
		act := actions[i%len(actions)]
		var at time.Time
		switch act {
		case "resign":
			at = time.Now()
			require.NoError(t, cur.elec.Resign())
		case "expire":
			require.NoError(t, c.Expire(cur.session))
			at = time.Now() // the session has ended on the server
		case "kill":
			at = time.Now()
			cur.slot.proxy.Blackhole()
		case "close":
			at = time.Now()
			require.NoError(t, cur.slot.s.Close()) // no resign, no release
		}
		next := r.next(t, 20*time.Second)
		require.NotSame(t, cur, next)
		wait := next.start.Sub(at)
		bound := handoffBound
		if act == "kill" {
			bound += sessionTimeout
		}
		require.LessOrEqual(t, wait, bound, "change %d (%s): new leader %s after %v", i, act, next.who, wait)
		latency[act] = max(latency[act], wait)
		if act == "kill" || act == "close" {
			old := cur.slot
			old.close(t)
			for j := range slots {
				if slots[j] == old {
					slots[j] = startSlot(t, c, r, path, fmt.Sprintf("p%d", gen))
					gen++
				}
			}
		}
		cur = next
		for len(r.started) > 0 { // an unplanned change: act on the newest leader
			cur = <-r.started
		}
	}
	for _, sl := range slots {
		sl.close(t)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	require.Empty(t, r.problems)
	require.GreaterOrEqual(t, len(r.terms), changes+1)
	for i := 1; i < len(r.terms); i++ {
		require.Greater(t, r.terms[i].token, r.terms[i-1].token, "tokens must increase from leader to leader")
	}
	t.Logf("%d terms; slowest handoff by cause: %v (bound %v, kill: plus the %v session timeout)", len(r.terms), latency, handoffBound, sessionTimeout)
}

func TestIntegration_LeaderCuratorTakesTurns(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		const path = "/election/curator"
		cur := g.Curator(t, c.ConnectString(), sessionTimeout)
		r := newRecorder()
		r.peer = cur
		ctx, cancel := context.WithCancel(context.Background())
		var runs sync.WaitGroup
		t.Cleanup(func() { cancel(); runs.Wait() })
		var ours [2]*zklock.LeaderElection
		for i, id := range []string{"go-A", "go-B"} {
			s := connect(t, c)
			e, err := zklock.NewLeaderElection(s, path, id, zklock.WithRequeue())
			require.NoError(t, err)
			ours[i] = e
			runs.Go(func() {
				if err := e.Run(ctx, r.lead(id, e, s, nil)); !errors.Is(err, context.Canceled) {
					r.problem("%s: Run returned %v", id, err)
				}
			})
			if i == 0 {
				require.Equal(t, "go-A", r.next(t, 20*time.Second).who)
			}
		}
		waitParticipants := func(n int) []string {
			var ids []string
			require.Eventually(t, func() bool {
				ps, err := ours[0].Participants(ctx)
				ids = ids[:0]
				for _, p := range ps {
					ids = append(ids, p.ID())
				}
				return err == nil && len(ps) == n
			}, 20*time.Second, 5*time.Millisecond)
			return ids
		}
		noneOfOursLive := func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, tm := range r.terms {
				require.Error(t, tm.ctx.Err(), "%s is live while Curator leads", tm.who)
			}
		}
		waitParticipants(2)
		for round := 1; round <= 3; round++ {
			cname, cid := fmt.Sprintf("C%d", round), fmt.Sprintf("curator-%d", round)
			cur.Must(t, fmt.Sprintf("leader %s %s %s", cname, path, cid))
			require.Equal(t, []string{"go-A", "go-B", cid}, waitParticipants(3))
			require.Equal(t, "go-A", cur.Must(t, "leaderid "+cname), "Curator reads our id from our node")

			// go-A resigns: go-B, the next in line, leads; Curator still waits.
			require.NoError(t, ours[0].Resign())
			tm := r.next(t, 10*time.Second)
			require.Equal(t, "go-B", tm.who)
			for _, ev := range tm.peerLog {
				require.NotEqual(t, cname+" leader", ev.String(), "Curator led before go-B")
			}
			// go-B resigns: Curator leads, with none of ours live.
			require.NoError(t, ours[1].Resign())
			_, err := cur.WaitEvent(ctxTimeout(t, 10*time.Second), cname, "leader")
			require.NoError(t, err)
			noneOfOursLive()
			l, err := ours[1].Leader(ctx)
			require.NoError(t, err)
			require.Equal(t, cid, l.ID(), "we read Curator's id from its node")
			require.Equal(t, []string{cid, "go-A", "go-B"}, waitParticipants(3))

			// Curator resigns: go-A leads, only after Curator's term ended.
			cur.Must(t, "resign "+cname)
			tm = r.next(t, 10*time.Second)
			require.Equal(t, "go-A", tm.who)
			require.Contains(t, fmt.Sprint(tm.peerLog), cname+" notleader", "go-A led before Curator's term ended")
			_, err = cur.WaitEvent(ctxTimeout(t, 10*time.Second), cname, "notleader")
			require.NoError(t, err)
			waitParticipants(2)
		}
		cancel()
		runs.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		require.Empty(t, r.problems)
		require.Len(t, r.terms, 1+3*2)
	})
}

func TestIntegration_LeaderRunResults(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	const path = "/election/results"
	ctx := ctxTimeout(t, 30*time.Second)

	_, err := zklock.NewLeaderElection(nil, path, "x")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewLeaderElection(s, "relative", "x")
	require.ErrorIs(t, err, zklock.ErrInvalidPath)
	e, err := zklock.NewLeaderElection(s, path, "solo")
	require.NoError(t, err)
	require.ErrorIs(t, e.Run(ctx, nil), zklock.ErrInvalidArgument)
	require.ErrorIs(t, e.Resign(), zklock.ErrNotHeld)
	_, err = e.Leader(ctx)
	require.ErrorIs(t, err, zklock.ErrNoLeader)

	// fn's error is Run's; the node is gone afterwards; the data is the id.
	boom := errors.New("boom")
	err = e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		data, _, err := s.Conn().Get(l.Hold().Node())
		require.NoError(t, err)
		require.Equal(t, "solo", string(data))
		require.ErrorIs(t, e.Run(ctx, func(context.Context, *zklock.Leadership) error { return nil }), zklock.ErrRunning)
		p, err := e.Leader(ctx)
		require.NoError(t, err)
		require.Equal(t, "solo", p.ID())
		require.Equal(t, l.Token(), p.Token)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Empty(t, children(t, s.Conn(), path))

	// Resign ends the term and the run (no requeue) with nil.
	require.NoError(t, e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		require.NoError(t, e.Resign())
		<-ctx.Done()
		require.ErrorIs(t, context.Cause(ctx), zklock.ErrResigned)
		return nil
	}))

	// A server-side expiry ends the term with ErrLost; Run reports it.
	err = e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		require.NoError(t, c.Expire(l.Hold().SessionID()))
		<-ctx.Done()
		return nil
	})
	require.ErrorIs(t, err, zklock.ErrLost)
	require.ErrorIs(t, err, zklock.ErrSessionExpired)

	// Revocation (Curator's __REVOKE__) ends a revocable election's term.
	rv, err := zklock.NewLeaderElection(s, path, "", zklock.WithRevocable())
	require.NoError(t, err)
	require.NoError(t, rv.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		require.NoError(t, zklock.Revoke(ctx, s, l.Hold().Node()))
		<-ctx.Done()
		require.ErrorIs(t, context.Cause(ctx), zklock.ErrRevoked)
		return nil
	}))

	// Cancelling the campaign leaves no node; the caller's cancel ends a term.
	holder := connect(t, c)
	other, err := zklock.NewLeaderElection(holder, path, "other")
	require.NoError(t, err)
	leading, release := make(chan struct{}), make(chan struct{})
	go func() {
		_ = other.Run(context.Background(), func(ctx context.Context, l *zklock.Leadership) error {
			close(leading)
			<-release
			return nil
		})
	}()
	<-leading
	_, err = e.TryCampaign(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked, "TryCampaign never waits")
	require.Len(t, children(t, s.Conn(), path), 1, "and writes nothing")
	wctx, wcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer wcancel()
	require.ErrorIs(t, e.Run(wctx, func(context.Context, *zklock.Leadership) error { return nil }), context.DeadlineExceeded)
	require.Eventually(t, func() bool { return len(children(t, s.Conn(), path)) == 1 }, 10*time.Second, 5*time.Millisecond)
	close(release)
	require.Eventually(t, func() bool { return len(children(t, s.Conn(), path)) == 0 }, 10*time.Second, 5*time.Millisecond)

	rctx, rcancel := context.WithCancel(ctx)
	err = e.Run(rctx, func(ctx context.Context, l *zklock.Leadership) error {
		rcancel()
		<-ctx.Done()
		return ctx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, strings.HasPrefix(e.Path(), "/election"))
}
