package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// tickRun is one job run, as the job saw it.
type tickRun struct {
	who   string
	tick  time.Time
	token int64
	hold  *zklock.Hold
}

// tickLog records every job run of every participant of a test.
type tickLog struct {
	mu   sync.Mutex
	runs []tickRun
	ran  chan tickRun
}

func newTickLog() *tickLog { return &tickLog{ran: make(chan tickRun, 1024)} }

// job is a participant's job: it records the run; ticks whose second is
// divisible by 4 fail with exit status 3, by 5 with an error.
func (l *tickLog) job(who string) func(context.Context, zklock.Tick) error {
	return func(ctx context.Context, t zklock.Tick) error {
		r := tickRun{who: who, tick: t.Time, token: t.Token, hold: t.Hold}
		l.mu.Lock()
		l.runs = append(l.runs, r)
		l.mu.Unlock()
		l.ran <- r
		switch sec := t.Time.Unix(); {
		case sec%4 == 0:
			return exitStatus(3)
		case sec%5 == 0:
			return errors.New("boom")
		}
		return nil
	}
}

type exitStatus int

func (e exitStatus) Error() string { return "exit status " + strconv.Itoa(int(e)) }
func (e exitStatus) ExitCode() int { return int(e) }

// once checks that no tick ran twice, and returns the ticks that ran, in order.
func (l *tickLog) once(t *testing.T) []time.Time {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[time.Time]string{}
	var ticks []time.Time
	for _, r := range l.runs {
		if who, ok := seen[r.tick]; ok {
			t.Errorf("tick %s ran twice: by %s and %s", r.tick.Format(time.RFC3339Nano), who, r.who)
		}
		seen[r.tick] = r.who
		ticks = append(ticks, r.tick)
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Before(ticks[j]) })
	return ticks
}

func newSchedule(t testing.TB, s *zklock.Session, path, id string, opts ...zklock.ScheduleOption) *zklock.Schedule {
	t.Helper()
	sc, err := zklock.NewSchedule(s, path, time.Second, append([]zklock.ScheduleOption{zklock.WithScheduleID(id)}, opts...)...)
	require.NoError(t, err)
	return sc
}

// runSchedule runs sc until the returned stop is called, which waits for
// Run and returns its error (nil for the cancellation stop makes).
func runSchedule(t testing.TB, sc *zklock.Schedule, job func(context.Context, zklock.Tick) error) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx, job) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
				if errors.Is(err, context.Canceled) { // Run returns ctx's cause
					err = nil
				}
			case <-time.After(20 * time.Second):
				err = errors.New("Run did not return")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// TestIntegration_ScheduleTwoSchedulersEachTickOnce: two participants of
// one schedule, 1 s ticks for about 6 s, the leader stopped (a restart)
// half way: every tick from the first on runs exactly once, and the
// history tells each outcome.
func TestIntegration_ScheduleTwoSchedulersEachTickOnce(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s1, s2 := connect(t, c, zklock.WithLossLimit(0)), connect(t, c, zklock.WithLossLimit(0))
	log := newTickLog()
	stops := map[string]func() error{
		"a": runSchedule(t, newSchedule(t, s1, "/sched/two", "a"), log.job("a")),
		"b": runSchedule(t, newSchedule(t, s2, "/sched/two", "b"), log.job("b")),
	}
	var first tickRun
	select {
	case first = <-log.ran:
	case <-time.After(20 * time.Second):
		t.Fatal("no tick ran")
	}
	deadline := time.After(6 * time.Second)
	stopped := false
	for done := false; !done; {
		select {
		case r := <-log.ran:
			if !stopped && r.tick.Sub(first.tick) >= 3*time.Second {
				// Restart the leader: the other takes over.
				require.NoError(t, stops[r.who]())
				stopped = true
			}
		case <-deadline:
			done = true
		}
	}
	require.True(t, stopped)
	for _, stop := range stops {
		require.NoError(t, stop())
	}
	ticks := log.once(t)
	require.GreaterOrEqual(t, len(ticks), 5)
	require.Equal(t, first.tick, ticks[0])
	whos := map[string]bool{}
	log.mu.Lock()
	for _, r := range log.runs {
		whos[r.who] = true
	}
	log.mu.Unlock()
	require.Len(t, whos, 2, "both participants led")

	h, err := zklock.ScheduleHistory(ctxTimeout(t, 10*time.Second), s1, "/sched/two")
	require.NoError(t, err)
	require.Equal(t, time.Second, h.Every)
	// The schedulers were stopped at the end: the newest claim may be
	// abandoned, its job not started or its outcome not written.
	claims := h.Claims
	last := len(claims) - 1
	if last >= 0 && claims[last].Outcome == zklock.OutcomeAbandoned && len(claims) == len(ticks)+1 {
		claims = claims[:last]
	}
	require.Len(t, claims, len(ticks))
	missed := map[time.Time]bool{}
	for _, m := range h.Missed {
		missed[m] = true
	}
	var prevToken int64
	for i, cl := range claims {
		require.Equal(t, ticks[i], cl.Tick)
		require.GreaterOrEqual(t, cl.Token, prevToken, "claims are made by leaders in token order")
		prevToken = cl.Token
		switch sec := cl.Tick.Unix(); {
		case i == last && cl.Outcome == zklock.OutcomeAbandoned:
			require.True(t, cl.End.IsZero(), "an abandoned claim has no end")
			continue
		case sec%4 == 0:
			require.Equal(t, zklock.OutcomeFailed, cl.Outcome, "tick %v", cl.Tick)
			require.NotNil(t, cl.ExitCode)
			require.Equal(t, 3, *cl.ExitCode)
		case sec%5 == 0:
			require.Equal(t, zklock.OutcomeFailed, cl.Outcome)
			require.Equal(t, "boom", cl.Error)
			require.Nil(t, cl.ExitCode)
		default:
			require.Equal(t, zklock.OutcomeOK, cl.Outcome, "tick %v", cl.Tick)
		}
		require.False(t, cl.End.Before(cl.Start))
	}
	// The handover may skip a tick (a new leader campaigning across one);
	// such a tick is reported missed, never run.
	for m := range missed {
		require.NotContains(t, ticks, m)
	}
	require.Equal(t, len(h.Missed), h.MissedTotal)
	require.True(t, h.Next.After(time.Now()))
}

// TestIntegration_ScheduleExpiredLeader: the leader's session is expired
// mid-run; the other participant claims the next ticks; a claim made with
// the old leader's hold fails in ZooKeeper (its check names a node that is
// gone) and creates nothing.
func TestIntegration_ScheduleExpiredLeader(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s1, s2 := connect(t, c, zklock.WithLossLimit(0)), connect(t, c, zklock.WithLossLimit(0))
	log := newTickLog()
	sc1 := newSchedule(t, s1, "/sched/expire", "a")
	runSchedule(t, sc1, log.job("a"))
	var old tickRun
	select {
	case old = <-log.ran:
	case <-time.After(20 * time.Second):
		t.Fatal("no tick ran")
	}
	runSchedule(t, newSchedule(t, s2, "/sched/expire", "b"), log.job("b"))
	require.NoError(t, c.Expire(old.hold.SessionID()))
	// The other participant takes over and runs ticks.
	var taken []tickRun
	timeout := time.After(30 * time.Second)
	for len(taken) < 2 {
		select {
		case r := <-log.ran:
			if r.token != old.token {
				taken = append(taken, r)
			}
		case <-timeout:
			t.Fatal("no new leader ran two ticks")
		}
	}
	require.Greater(t, taken[0].token, old.token)
	require.Greater(t, taken[0].hold.SessionID(), int64(0))

	// The deposed leader's claim: its check fails in ZooKeeper.
	next := sc1.Next(time.Now().Add(10 * time.Second))
	_, err := sc1.Claim(ctxTimeout(t, 10*time.Second), old.hold, next)
	require.ErrorIs(t, err, zklock.ErrLost)
	require.ErrorIs(t, err, zklock.ErrNodeGone)
	require.ErrorIs(t, err, zk.ErrNoNode, "the multi's check failed in ZooKeeper")
	ok, _, err := s1.Conn().Exists(s1.FullPath("/sched/expire/ticks/" + strconv.FormatInt(next.UnixMilli(), 10)))
	require.NoError(t, err)
	require.False(t, ok, "a refused claim creates nothing")
	log.once(t)
}

// uncheckedClaim claims tick at path as a leader with token would WITHOUT
// the check of its node: the negative control of the claim's multi. Test
// code only.
func uncheckedClaim(conn *zk.Conn, path string, tick time.Time, token int64) error {
	data := fmt.Sprintf(`{"v":1,"id":"unchecked","token":%d,"every_ms":1000,"start":%q}`, token, time.Now().UTC().Format(time.RFC3339Nano))
	_, err := conn.Multi(&zk.CreateRequest{Path: path + "/ticks/" + strconv.FormatInt(tick.UnixMilli(), 10), Data: []byte(data),
		Acl: zk.WorldACL(zk.PermAll)})
	return err
}

// TestIntegration_ScheduleUncheckedClaimNegative: without the leader check,
// a deposed leader's claim goes through: it takes a tick the new leader
// would have run, after the new leader's own claims (its token is below
// theirs), and the new leader then skips it. With the check (the previous
// test), the same claim fails. This shows the check is what keeps a
// deposed leader out.
func TestIntegration_ScheduleUncheckedClaimNegative(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s1, s2 := connect(t, c, zklock.WithLossLimit(0)), connect(t, c, zklock.WithLossLimit(0))
	log := newTickLog()
	sc1 := newSchedule(t, s1, "/sched/negative", "a")
	stop1 := runSchedule(t, sc1, log.job("a"))
	var old tickRun
	select {
	case old = <-log.ran:
	case <-time.After(20 * time.Second):
		t.Fatal("no tick ran")
	}
	runSchedule(t, newSchedule(t, s2, "/sched/negative", "b"), log.job("b"))
	require.NoError(t, c.Expire(old.hold.SessionID()))
	var taken tickRun
	for taken.token == 0 || taken.token == old.token {
		select {
		case taken = <-log.ran:
		case <-time.After(30 * time.Second):
			t.Fatal("no new leader")
		}
	}
	require.NoError(t, stop1())
	// The deposed leader claims a tick ahead of the new leader, unchecked.
	stolen := sc1.Next(time.Now().Add(2 * time.Second))
	require.NoError(t, uncheckedClaim(s1.Conn(), "/sched/negative", stolen, old.token), "the unchecked claim went through")
	require.Eventually(t, func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.runs) > 0 && log.runs[len(log.runs)-1].tick.After(stolen)
	}, 20*time.Second, 10*time.Millisecond)
	h, err := zklock.ScheduleHistory(ctxTimeout(t, 10*time.Second), s2, "/sched/negative")
	require.NoError(t, err)
	var violations []string
	var prev int64
	for _, cl := range h.Claims {
		if cl.Token < prev {
			violations = append(violations, fmt.Sprintf("tick %s claimed with token %d after a claim with token %d", cl.Tick, cl.Token, prev))
		}
		prev = max(prev, cl.Token)
	}
	require.NotEmpty(t, violations, "the unchecked claim of a deposed leader must show")
	for _, r := range log.runs {
		require.NotEqual(t, stolen, r.tick, "the new leader skipped the stolen tick")
	}
}

// TestIntegration_ScheduleBadInput: refused at construction, with nothing sent.
func TestIntegration_ScheduleBadInput(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := connect(t, c)
	for _, tc := range []struct {
		name  string
		path  string
		every time.Duration
		opts  []zklock.ScheduleOption
	}{
		{"relative path", "sched", time.Second, nil},
		{"zero period", "/sched/x", 0, nil},
		{"sub-millisecond", "/sched/x", time.Second + time.Nanosecond, nil},
		{"offset past the period", "/sched/x", time.Second, []zklock.ScheduleOption{zklock.WithOffset(time.Second)}},
		{"negative offset", "/sched/x", time.Second, []zklock.ScheduleOption{zklock.WithOffset(-time.Millisecond)}},
		{"no history", "/sched/x", time.Second, []zklock.ScheduleOption{zklock.WithHistory(0)}},
		{"policy", "/sched/x", time.Second, []zklock.ScheduleOption{zklock.WithMissed(zklock.MissedTicks(7))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := zklock.NewSchedule(s, tc.path, tc.every, tc.opts...)
			require.ErrorIs(t, err, zklock.ErrInvalidArgument)
		})
	}
	_, err := zklock.NewSchedule(nil, "/sched/x", time.Second)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	sc, err := zklock.NewSchedule(s, "/sched/x", time.Second)
	require.NoError(t, err)
	require.ErrorIs(t, sc.Run(context.Background(), nil), zklock.ErrInvalidArgument)
	_, err = sc.Claim(context.Background(), nil, sc.Next(time.Now()))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	// A history of a path with no schedule, and of one with garbage claims.
	h, err := zklock.ScheduleHistory(ctxTimeout(t, 5*time.Second), s, "/sched/none")
	require.NoError(t, err)
	require.Empty(t, h.Claims)
	require.True(t, h.Next.IsZero())
	for _, p := range []string{"/sched", "/sched/junk", "/sched/junk/ticks"} {
		_, _ = s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	}
	for name, data := range map[string]string{"1000": "not json", "2000": `{"v":1,"every_ms":1000,"token":5}`, "x": "{}", "007": "{}"} {
		_, err := s.Conn().Create("/sched/junk/ticks/"+name, []byte(data), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	h, err = zklock.ScheduleHistory(ctxTimeout(t, 5*time.Second), s, "/sched/junk")
	require.NoError(t, err)
	require.Len(t, h.Claims, 2)
	require.Equal(t, zklock.OutcomeUnreadable, h.Claims[0].Outcome)
	require.Equal(t, zklock.OutcomeAbandoned, h.Claims[1].Outcome)
	require.Equal(t, time.Second, h.Every)
}

// TestIntegration_ScheduleHistoryBounded: the leader keeps the newest
// claims only (WithHistory), and Finish of a deposed leader's tick writes
// nothing.
func TestIntegration_ScheduleHistoryBounded(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := connect(t, c, zklock.WithLossLimit(0))
	log := newTickLog()
	sc := newSchedule(t, s, "/sched/bounded", "a", zklock.WithHistory(2))
	stop := runSchedule(t, sc, log.job("a"))
	var last tickRun
	for range 4 {
		select {
		case last = <-log.ran:
		case <-time.After(20 * time.Second):
			t.Fatal("ticks stopped")
		}
	}
	require.NoError(t, stop())
	names := children(t, s.Conn(), "/sched/bounded/ticks")
	require.LessOrEqual(t, len(names), 3, "at most the history and the claim made since: %v", names)
	require.Contains(t, names, strconv.FormatInt(last.tick.UnixMilli(), 10))

	// A claim, then the term ends before the outcome is written: Finish
	// is refused, and the claim stays without an outcome (abandoned).
	e := sc.Election()
	h, err := e.Campaign(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	tick, err := sc.Claim(ctxTimeout(t, 10*time.Second), h, sc.Next(time.Now()))
	require.NoError(t, err)
	_, err = sc.Claim(ctxTimeout(t, 10*time.Second), h, tick.Time)
	require.ErrorIs(t, err, zklock.ErrLocked, "a tick is claimed once")
	require.NoError(t, h.Release())
	require.ErrorIs(t, sc.Finish(ctxTimeout(t, 10*time.Second), tick, nil), zklock.ErrLost)
	hist, err := zklock.ScheduleHistory(ctxTimeout(t, 10*time.Second), s, "/sched/bounded")
	require.NoError(t, err)
	newest := hist.Claims[len(hist.Claims)-1]
	require.Equal(t, tick.Time, newest.Tick)
	require.Equal(t, zklock.OutcomeAbandoned, newest.Outcome)
	require.Equal(t, h.Token(), newest.Token)
}
