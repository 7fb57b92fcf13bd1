package zklock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestHealthCheckFailing counts failures on a fake clock: Failures runs in
// a row, Interval apart, make it fire; a pass starts the count over; a
// check that keeps passing never fires.
func TestHealthCheckFailing(t *testing.T) {
	const interval = 10 * time.Second
	for _, tc := range []struct {
		name    string
		results string // one run per character: '.' passes, 'x' fails; the last repeats
		k       int
		fireAt  int // the run (1-based) after which it fires; 0 never
	}{
		{"healthy never fires", ".", 3, 0},
		{"fails at once", "x", 3, 3},
		{"one failure is enough with k=1", "..x", 1, 3},
		{"a pass starts over", "xx.xx.xxx", 3, 9},
		{"alternating never fires", "x.", 2, 0},
		{"failing after passing", "....x", 3, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var runs atomic.Int32
				check := func(ctx context.Context) error {
					n := int(runs.Add(1))
					r := tc.results[min(n, len(tc.results))-1]
					if r == 'x' {
						return errors.New("down")
					}
					return nil
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				start := time.Now()
				failing := zklock.HealthCheck{Check: check, Interval: interval, Failures: tc.k}.Failing(ctx)
				const horizon = 50 // intervals
				select {
				case err := <-failing:
					require.NotZero(t, tc.fireAt, "fired after %d runs: %v", runs.Load(), err)
					require.ErrorIs(t, err, zklock.ErrUnhealthy)
					require.ErrorIs(t, err, zklock.ErrResigned)
					require.Equal(t, time.Duration(tc.fireAt)*interval, time.Since(start))
					require.EqualValues(t, tc.fireAt, runs.Load())
				case <-time.After(horizon*interval + interval/2):
					require.Zero(t, tc.fireAt, "did not fire in %d intervals", horizon)
					require.EqualValues(t, horizon, runs.Load())
				}
				cancel()
				synctest.Wait() // its goroutine is gone
			})
		})
	}
}

// TestHealthCheckRunBounded: each run's context ends after Interval, so a
// hung check counts as a failure instead of hanging the count.
func TestHealthCheckRunBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		check := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		start := time.Now()
		err := <-zklock.HealthCheck{Check: check, Interval: time.Second, Failures: 2}.Failing(t.Context())
		require.ErrorIs(t, err, context.DeadlineExceeded)
		// Ticks at 1s and 3s (the tick at 2s was dropped while the first run hung).
		require.LessOrEqual(t, time.Since(start), 4*time.Second)
	})
}

func TestHealthCheckRefused(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	ok := func(context.Context) error { return nil }
	for _, opt := range []zklock.Option{
		zklock.WithHealthCheck(nil, time.Second, 1),
		zklock.WithHealthCheck(ok, 0, 1),
		zklock.WithHealthCheck(ok, time.Second, 0),
	} {
		_, err := zklock.NewLeaderElection(s, "/h", "", opt)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument)
		_, err = zklock.NewLeaderLatch(s, "/h", "", opt)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	}
}

// switchable is a health check whose outcome the test sets.
type switchable struct {
	failing atomic.Bool
	runs    atomic.Int64
}

func (h *switchable) check(context.Context) error {
	h.runs.Add(1)
	if h.failing.Load() {
		return errors.New("job unhealthy")
	}
	return nil
}

const (
	healthInterval = 200 * time.Millisecond
	healthFailures = 3
)

// TestIntegration_UnhealthyLeaderReplaced: a leader whose check starts
// failing resigns after Failures runs and another takes over within
// Interval × Failures plus one interval (the tick's phase) plus a handoff;
// the resigned one's term ends with ErrUnhealthy, and it joins the queue
// again once its check passes.
func TestIntegration_UnhealthyLeaderReplaced(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	hA, hB := &switchable{}, &switchable{}
	sA, sB := connect(t, c, zklock.WithLossLimit(0)), connect(t, c, zklock.WithLossLimit(0))
	eA, err := zklock.NewLeaderElection(sA, "/health", "A", zklock.WithHealthCheck(hA.check, healthInterval, healthFailures))
	require.NoError(t, err)
	eB, err := zklock.NewLeaderElection(sB, "/health", "B", zklock.WithHealthCheck(hB.check, healthInterval, healthFailures))
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	causes := make(chan error, 4)
	starts := make(chan string, 4)
	run := func(e *zklock.LeaderElection) chan error {
		done := make(chan error, 1)
		go func() {
			done <- e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
				starts <- e.ID()
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return nil
			})
		}()
		return done
	}
	doneA := run(eA)
	require.Equal(t, "A", <-starts)
	doneB := run(eB)
	require.Eventually(t, func() bool {
		ps, err := eA.Participants(ctx)
		return err == nil && len(ps) == 2
	}, 10*time.Second, 10*time.Millisecond)

	flipped := time.Now()
	hA.failing.Store(true)
	select {
	case who := <-starts:
		require.Equal(t, "B", who)
	case <-time.After(30 * time.Second):
		t.Fatal("the unhealthy leader was not replaced")
	}
	took := time.Since(flipped)
	bound := healthInterval*(healthFailures+1) + handoffBound
	t.Logf("unhealthy leader replaced %v after its check started failing (interval %v × %d failures; bound %v)",
		took.Round(time.Millisecond), healthInterval, healthFailures, bound)
	require.Less(t, took, bound)
	require.GreaterOrEqual(t, took, healthInterval*(healthFailures-1), "resigned before %d failures", healthFailures)
	require.ErrorIs(t, <-causes, zklock.ErrUnhealthy)
	require.False(t, eA.IsLeader())

	// Unhealthy, A stays out of the queue; healthy again, it queues behind B.
	ps, err := eB.Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 1, "an unhealthy candidate does not campaign")
	hA.failing.Store(false)
	require.Eventually(t, func() bool {
		ps, err := eB.Participants(ctx)
		return err == nil && len(ps) == 2 && ps[1].ID() == "A"
	}, 10*time.Second, 10*time.Millisecond)
	require.True(t, eB.IsLeader())

	cancel()
	require.ErrorIs(t, <-doneA, context.Canceled)
	require.NoError(t, <-doneB, "a leader's Run returns fn's nil")
}

// TestIntegration_HealthyStandbyNeverResigns: over many intervals neither a
// healthy leader nor a healthy standby leaves; a standby whose check fails
// leaves the queue (it campaigns only while healthy), and comes back.
func TestIntegration_HealthyStandbyNeverResigns(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	hA, hB := &switchable{}, &switchable{}
	sA, sB := connect(t, c, zklock.WithLossLimit(0)), connect(t, c, zklock.WithLossLimit(0))
	eA, err := zklock.NewLeaderElection(sA, "/standby", "A", zklock.WithHealthCheck(hA.check, healthInterval, healthFailures))
	require.NoError(t, err)
	eB, err := zklock.NewLeaderElection(sB, "/standby", "B", zklock.WithHealthCheck(hB.check, healthInterval, healthFailures))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	terms := make(chan string, 8)
	for _, e := range []*zklock.LeaderElection{eA, eB} {
		go func() {
			_ = e.Run(ctx, func(ctx context.Context, _ *zklock.Leadership) error {
				terms <- e.ID()
				<-ctx.Done()
				return nil
			})
		}()
		if e == eA {
			require.Equal(t, "A", <-terms)
		}
	}
	var nodeB string
	require.Eventually(t, func() bool {
		ps, err := eA.Participants(ctx)
		if err != nil || len(ps) != 2 {
			return false
		}
		nodeB = ps[1].Node
		return true
	}, 10*time.Second, 10*time.Millisecond)

	const intervals = 10
	runsB := hB.runs.Load()
	select {
	case who := <-terms:
		t.Fatalf("%s started a term while both were healthy", who)
	case <-time.After(intervals * healthInterval):
	}
	ps, err := eA.Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, nodeB, ps[1].Node, "the healthy standby kept its place")
	require.True(t, eA.IsLeader())
	require.GreaterOrEqual(t, hB.runs.Load()-runsB, int64(intervals/2), "the standby's check ran")
	t.Logf("healthy for %d intervals: leader and standby kept their places; the standby's check ran %d times",
		intervals, hB.runs.Load()-runsB)

	// An unhealthy standby leaves the queue, and comes back once healthy.
	hB.failing.Store(true)
	require.Eventually(t, func() bool {
		ps, err := eA.Participants(ctx)
		return err == nil && len(ps) == 1
	}, healthInterval*(healthFailures+1)+handoffBound, 10*time.Millisecond)
	hB.failing.Store(false)
	require.Eventually(t, func() bool {
		ps, err := eA.Participants(ctx)
		return err == nil && len(ps) == 2 && ps[1].Node != nodeB
	}, 10*time.Second, 10*time.Millisecond)
	require.True(t, eA.IsLeader())
}

// TestIntegration_UnhealthyLatchReplaced: the same for a LeaderLatch.
func TestIntegration_UnhealthyLatchReplaced(t *testing.T) {
	c := zktest.Start(t)
	hA, hB := &switchable{}, &switchable{}
	sA, sB := connect(t, c, zklock.WithLossLimit(0)), connect(t, c, zklock.WithLossLimit(0))
	lA, err := zklock.NewLeaderLatch(sA, "/hlatch", "A", zklock.WithHealthCheck(hA.check, healthInterval, healthFailures))
	require.NoError(t, err)
	lB, err := zklock.NewLeaderLatch(sB, "/hlatch", "B", zklock.WithHealthCheck(hB.check, healthInterval, healthFailures))
	require.NoError(t, err)
	ctx := ctxTimeout(t, 30*time.Second)
	require.NoError(t, lA.Start(ctx))
	termA, err := lA.Await(ctx)
	require.NoError(t, err)
	require.NoError(t, lB.Start(ctx))
	t.Cleanup(func() { _ = lA.Close(); _ = lB.Close() })
	require.Eventually(t, func() bool {
		ps, err := lA.Participants(ctx)
		return err == nil && len(ps) == 2
	}, 10*time.Second, 10*time.Millisecond)

	flipped := time.Now()
	hA.failing.Store(true)
	termB, err := lB.Await(ctx)
	require.NoError(t, err)
	took := time.Since(flipped)
	t.Logf("unhealthy latch leader replaced %v after its check started failing", took.Round(time.Millisecond))
	require.Less(t, took, healthInterval*(healthFailures+1)+handoffBound)
	require.Error(t, termA.Err(), "the unhealthy term ended")
	require.NoError(t, termB.Err())
	require.Greater(t, termB.Token(), termA.Token())
}
