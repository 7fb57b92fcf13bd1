package zklock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func ms(t string) time.Time {
	v, err := time.Parse("15:04:05.000", t)
	if err != nil {
		panic(err)
	}
	return time.Date(2026, 12, 5, v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
}

func TestTickAt(t *testing.T) {
	for _, tc := range []struct {
		now           time.Time
		every, offset time.Duration
		want          time.Time
	}{
		{ms("10:00:00.000"), time.Second, 0, ms("10:00:00.000")},
		{ms("10:00:00.999"), time.Second, 0, ms("10:00:00.000")},
		{ms("10:04:59.999"), 5 * time.Minute, 0, ms("10:00:00.000")},
		{ms("10:05:00.000"), 5 * time.Minute, 0, ms("10:05:00.000")},
		{ms("10:05:29.999"), 5 * time.Minute, 30 * time.Second, ms("10:00:30.000")},
		{ms("10:05:30.000"), 5 * time.Minute, 30 * time.Second, ms("10:05:30.000")},
		{ms("10:00:00.100"), time.Hour, 0, ms("10:00:00.000")},
		{ms("10:59:59.000"), time.Hour, 5 * time.Minute, ms("10:05:00.000")},
		{ms("10:04:59.000"), time.Hour, 5 * time.Minute, ms("09:05:00.000")},
		{time.UnixMilli(-1500), time.Second, 0, time.UnixMilli(-2000).UTC()}, // floor before the epoch
		{time.UnixMilli(-1), time.Second, 300 * time.Millisecond, time.UnixMilli(-700).UTC()},
		{ms("10:00:00.250").In(time.FixedZone("x", 3600+1800)), 1 * time.Hour, 0, ms("10:00:00.000")}, // UTC, not local
	} {
		t.Run(fmt.Sprintf("%s/%v+%v", tc.now.Format(time.RFC3339Nano), tc.every, tc.offset), func(t *testing.T) {
			require.Equal(t, tc.want, tickAt(tc.now, tc.every, tc.offset))
		})
	}
}

func TestTickPlan(t *testing.T) {
	sec := time.Second
	for _, tc := range []struct {
		name   string
		now    time.Time
		last   time.Time
		policy MissedTicks
		want   tickPlan
	}{
		{"new schedule waits for its first tick", ms("10:00:00.500"), time.Time{}, RunLatest, tickPlan{Tick: ms("10:00:01.000")}},
		{"new schedule, on a tick", ms("10:00:01.050"), time.Time{}, Skip, tickPlan{Tick: ms("10:00:01.000")}},
		{"claimed: the next one", ms("10:00:01.500"), ms("10:00:01.000"), RunLatest, tickPlan{Tick: ms("10:00:02.000")}},
		{"clock stepped back", ms("10:00:00.500"), ms("10:00:03.000"), RunLatest, tickPlan{Tick: ms("10:00:04.000")}},
		{"due within the grace", ms("10:00:02.099"), ms("10:00:01.000"), Skip, tickPlan{Tick: ms("10:00:02.000")}},
		{"past the grace: run late", ms("10:00:02.100"), ms("10:00:01.000"), RunLatest,
			tickPlan{Tick: ms("10:00:02.000"), Late: true}},
		{"past the grace: skip", ms("10:00:02.100"), ms("10:00:01.000"), Skip,
			tickPlan{Tick: ms("10:00:03.000"), Missed: 1}},
		{"gap, run the latest", ms("10:00:10.500"), ms("10:00:01.000"), RunLatest,
			tickPlan{Tick: ms("10:00:10.000"), Late: true, Missed: 8}},
		{"gap, skip", ms("10:00:10.500"), ms("10:00:01.000"), Skip,
			tickPlan{Tick: ms("10:00:11.000"), Missed: 9}},
		{"gap ending on a due tick", ms("10:00:10.010"), ms("10:00:01.000"), Skip,
			tickPlan{Tick: ms("10:00:10.000"), Missed: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, planTick(tc.now, tc.last, sec, 0, tc.policy))
		})
	}
	// The grace is a tenth of the period, at most a second.
	require.Equal(t, 100*time.Millisecond, dueGrace(time.Second))
	require.Equal(t, time.Second, dueGrace(time.Hour))
}

func TestTickPeriodBounds(t *testing.T) {
	for _, tc := range []struct {
		every, offset time.Duration
		ok            bool
	}{
		{time.Second, 0, true},
		{5 * time.Minute, 30 * time.Second, true},
		{MinTickPeriod - time.Millisecond, 0, false},
		{MaxTickPeriod + time.Millisecond, 0, false},
		{time.Second + time.Microsecond, 0, false},
		{time.Second, time.Microsecond, false},
		{time.Second, time.Second, false},
		{time.Second, -time.Millisecond, false},
		{-time.Second, 0, false},
	} {
		err := checkPeriod(tc.every, tc.offset)
		if tc.ok {
			require.NoError(t, err, "%v %v", tc.every, tc.offset)
		} else {
			require.ErrorIs(t, err, ErrInvalidArgument, "%v %v", tc.every, tc.offset)
		}
	}
	m, err := ParseMissedTicks("skip")
	require.NoError(t, err)
	require.Equal(t, Skip, m)
	_, err = ParseMissedTicks("all")
	require.ErrorIs(t, err, ErrInvalidArgument)
}

// memTicks is a tickStore in memory: one map of claims shared by the
// terms of a test, and a term that is deposed when alive is false.
type memTicks struct {
	mu      sync.Mutex
	claims  map[time.Time]claimRecord
	alive   bool
	token   int64
	delay   time.Duration // how long a claim takes to be answered (a pause)
	keep    int
	pruned  int
	finishs []error
}

func newMemTicks(token int64) *memTicks {
	return &memTicks{claims: map[time.Time]claimRecord{}, alive: true, token: token, keep: 100}
}

func (m *memTicks) ensureDir(context.Context) error { return nil }

func (m *memTicks) latest(context.Context) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var last time.Time
	for t := range m.claims {
		if t.After(last) {
			last = t
		}
	}
	return last, nil
}

func (m *memTicks) claim(ctx context.Context, p tickPlan, start time.Time) (Tick, error) {
	sent := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.alive {
		return Tick{}, fmt.Errorf("%w: deposed", ErrLost)
	}
	if _, ok := m.claims[p.Tick]; ok {
		return Tick{}, errTickTaken
	}
	rec := claimRecord{V: 1, Token: m.token, Start: start.Format(time.RFC3339Nano), Missed: p.Missed}
	m.claims[p.Tick] = rec
	if m.delay > 0 {
		m.mu.Unlock()
		time.Sleep(m.delay)
		m.mu.Lock()
	}
	return Tick{Time: p.Tick, Token: m.token, Late: p.Late, Missed: p.Missed, rec: rec, sent: sent}, nil
}

func (m *memTicks) finish(_ context.Context, t Tick, end time.Time, jobErr error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.finishs = append(m.finishs, jobErr)
	if !m.alive {
		return fmt.Errorf("%w: deposed", ErrLost)
	}
	m.claims[t.Time] = t.rec.finished(end, jobErr)
	return nil
}

func (m *memTicks) prune(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for len(m.claims) > m.keep {
		var oldest time.Time
		for t := range m.claims {
			if oldest.IsZero() || t.Before(oldest) {
				oldest = t
			}
		}
		delete(m.claims, oldest)
		m.pruned++
	}
	return nil
}

func (m *memTicks) fresh() time.Duration { return time.Second }

func (m *memTicks) retry(ctx context.Context, attempt int) int { return attempt + 1 }

// ran is a job's record of one tick: when it started, by the fake clock.
type ran struct {
	at   time.Time
	tick Tick
}

func recordJob(mu *sync.Mutex, runs *[]ran, d time.Duration) func(context.Context, Tick) error {
	return func(ctx context.Context, t Tick) error {
		mu.Lock()
		*runs = append(*runs, ran{time.Now(), t})
		mu.Unlock()
		if d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestScheduleTicksAligned: a leader runs the job once per tick, at the
// tick's wall-clock time (with the offset), each tick once.
func TestScheduleTicksAligned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := time.Now().UTC()           // synctest's clock starts at midnight
		time.Sleep(500 * time.Millisecond) // 00:00:00.500
		st := newMemTicks(7)
		var (
			mu   sync.Mutex
			runs []ran
		)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cfg := scheduleConfig{offset: 200 * time.Millisecond, missed: RunLatest}
		err := runTicks(ctx, st, time.Second, cfg, quiet, recordJob(&mu, &runs, 300*time.Millisecond))
		require.NoError(t, err)
		require.Equal(t, base, tickAt(base, time.Second, 0))
		var want []time.Time
		for i := range 5 {
			want = append(want, base.Add(200*time.Millisecond+time.Duration(i+1)*time.Second).UTC())
		}
		got := make([]time.Time, len(runs))
		for i, r := range runs {
			require.Equal(t, r.at.UTC(), r.tick.Time, "the job starts at its tick's time")
			require.False(t, r.tick.Late)
			require.Zero(t, r.tick.Missed)
			got[i] = r.tick.Time
		}
		require.Equal(t, want, got)
		require.Len(t, st.claims, 5)
		for _, rec := range st.claims {
			require.Equal(t, OutcomeOK, rec.Outcome)
		}
	})
}

// TestScheduleMissedTicks: after a gap with no leader, RunLatest runs the
// latest missed tick at once, late, and Skip waits for the next; both
// count the missed ones. A job longer than the period makes ticks missed
// the same way.
func TestScheduleMissedTicks(t *testing.T) {
	for _, tc := range []struct {
		policy     MissedTicks
		firstAfter time.Duration // from the term's start (00:00:10.500)
		late       bool
		missed     int
	}{
		{RunLatest, 0, true, 9},
		{Skip, 500 * time.Millisecond, false, 10},
	} {
		t.Run(tc.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := newMemTicks(7)
				t0 := time.Now().UTC()
				st.claims[t0] = claimRecord{V: 1, Outcome: OutcomeOK} // the last tick anyone ran
				time.Sleep(10*time.Second + 500*time.Millisecond)     // no leader meanwhile
				began := time.Now()
				var (
					mu   sync.Mutex
					runs []ran
				)
				ctx, cancel := context.WithTimeout(context.Background(), 2100*time.Millisecond)
				defer cancel()
				require.NoError(t, runTicks(ctx, st, time.Second, scheduleConfig{missed: tc.policy}, quiet, recordJob(&mu, &runs, 0)))
				require.NotEmpty(t, runs)
				first := runs[0]
				require.Equal(t, tc.firstAfter, first.at.Sub(began))
				require.Equal(t, tc.late, first.tick.Late)
				require.Equal(t, tc.missed, first.tick.Missed)
				require.Equal(t, tc.missed, st.claims[first.tick.Time].Missed, "the claim records the missed ticks")
				for _, r := range runs[1:] {
					require.False(t, r.tick.Late)
					require.Zero(t, r.tick.Missed)
				}
			})
		})
	}
	t.Run("long job", func(t *testing.T) {
		for _, tc := range []struct {
			policy MissedTicks
			second time.Duration // when the second job starts, from the first tick
			late   bool
			missed int
		}{
			{RunLatest, 2500 * time.Millisecond, true, 1},
			{Skip, 3 * time.Second, false, 2},
		} {
			synctest.Test(t, func(t *testing.T) {
				st := newMemTicks(7)
				var (
					mu   sync.Mutex
					runs []ran
				)
				ctx, cancel := context.WithTimeout(context.Background(), 3500*time.Millisecond)
				defer cancel()
				require.NoError(t, runTicks(ctx, st, time.Second, scheduleConfig{missed: tc.policy}, quiet, recordJob(&mu, &runs, 2500*time.Millisecond)))
				require.GreaterOrEqual(t, len(runs), 2)
				require.Equal(t, tc.second, runs[1].at.Sub(runs[0].at), tc.policy.String())
				require.Equal(t, tc.late, runs[1].tick.Late)
				require.Equal(t, tc.missed, runs[1].tick.Missed)
			})
		}
	})
}

// TestScheduleDeposedStops: once the term's check fails, the loop claims
// nothing more and returns ErrLost; a claim answered too late (the leader
// paused after sending it) does not start its job.
func TestScheduleDeposedStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemTicks(7)
		began := time.Now()
		var (
			mu   sync.Mutex
			runs []ran
		)
		go func() {
			time.Sleep(2500 * time.Millisecond)
			st.mu.Lock()
			st.alive = false
			st.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := runTicks(ctx, st, time.Second, scheduleConfig{}, quiet, recordJob(&mu, &runs, 0))
		require.ErrorIs(t, err, ErrLost)
		require.Len(t, runs, 3) // 00:00:00 (the clock starts on a tick), 01, 02
		require.Equal(t, 3*time.Second, time.Since(began), "the loop stopped at its next claim")
	})
	synctest.Test(t, func(t *testing.T) {
		st := newMemTicks(7)
		st.delay = 1500 * time.Millisecond // past fresh(): a pause between the claim and its answer
		var (
			mu   sync.Mutex
			runs []ran
		)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		require.NoError(t, runTicks(ctx, st, time.Second, scheduleConfig{}, quiet, recordJob(&mu, &runs, 0)))
		require.Empty(t, runs, "a job whose claim was answered late must not start")
		require.NotEmpty(t, st.finishs)
		require.True(t, errors.Is(st.finishs[0], ErrLost), "the outcome records why: %v", st.finishs[0])
	})
}

// TestScheduleHistoryPruned: the leader keeps the newest claims only.
func TestScheduleHistoryPruned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newMemTicks(7)
		st.keep = 3
		var (
			mu   sync.Mutex
			runs []ran
		)
		ctx, cancel := context.WithTimeout(context.Background(), 6500*time.Millisecond)
		defer cancel()
		require.NoError(t, runTicks(ctx, st, time.Second, scheduleConfig{}, quiet, recordJob(&mu, &runs, 0)))
		require.Len(t, runs, 7) // 00:00:00 to 06
		require.Len(t, st.claims, 3)
		require.Equal(t, 4, st.pruned)
		for _, r := range runs[4:] {
			require.Contains(t, st.claims, r.tick.Time)
		}
	})
}

// TestTickHistoryJudge: missed ticks between claims, overdue ones after
// the newest, and the next tick.
func TestTickHistoryJudge(t *testing.T) {
	claim := func(at string) TickClaim {
		return TickClaim{Tick: ms(at), Outcome: OutcomeOK, Every: time.Second}
	}
	h := &TickHistory{Claims: []TickClaim{claim("10:00:01.000"), claim("10:00:02.000"), claim("10:00:05.000"), claim("10:00:06.000")}}
	h.judge(ms("10:00:08.500"))
	require.Equal(t, time.Second, h.Every)
	require.Equal(t, 2, h.MissedTotal)
	require.Equal(t, []time.Time{ms("10:00:03.000"), ms("10:00:04.000")}, h.Missed)
	require.Equal(t, 2, h.Overdue) // 07 and 08
	require.Equal(t, ms("10:00:09.000"), h.Next)

	// A hostile gap is counted, and listed only in part.
	h = &TickHistory{Claims: []TickClaim{{Tick: time.UnixMilli(0).UTC(), Every: time.Second}, {Tick: ms("10:00:00.000"), Every: time.Second}}}
	h.judge(ms("10:00:00.010"))
	require.Equal(t, int(ms("10:00:00.000").UnixMilli()/1000)-1, h.MissedTotal)
	require.Len(t, h.Missed, maxMissedListed)
	require.Zero(t, h.Overdue)
}
