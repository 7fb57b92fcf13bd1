package zklock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// tickStore is where a term's claims live: ZooKeeper (zkTicks), for the
// term of one leader.
type tickStore interface {
	// ensureDir makes sure the claims' parent exists.
	ensureDir(ctx context.Context) error
	// latest returns the latest claimed tick, zero if there is none.
	latest(ctx context.Context) (time.Time, error)
	// claim claims p.Tick: errTickTaken if claimed already, an error
	// wrapping ErrLost if the term is over.
	claim(ctx context.Context, p tickPlan, start time.Time) (Tick, error)
	// finish records the job's outcome under the term's check.
	finish(ctx context.Context, t Tick, end time.Time, jobErr error) error
	// prune deletes the claims beyond the history's bound.
	prune(ctx context.Context) error
	// fresh is how long after a claim was sent its job may still start.
	fresh() time.Duration
	// retry waits before retrying after a connection problem.
	retry(ctx context.Context, attempt int) int
}

// runTicks is one term of a Schedule: it claims each tick as planTick
// decides and runs job for it, until ctx (the term's context) ends or a
// claim says the term is over. It returns nil when ctx ended, an error
// wrapping ErrLost when the term was found over, or an error retrying
// cannot get past.
func runTicks(ctx context.Context, st tickStore, every time.Duration, cfg scheduleConfig, log *slog.Logger, job func(context.Context, Tick) error) error {
	var last time.Time
	for attempt := 0; ; {
		err := st.ensureDir(ctx)
		if err == nil {
			last, err = st.latest(ctx)
		}
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if !retryable(err) {
			return err
		}
		attempt = st.retry(ctx, attempt)
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for attempt := 0; ; {
		if ctx.Err() != nil {
			return nil
		}
		now := time.Now()
		p := planTick(now, last, every, cfg.offset, cfg.missed)
		if wait := p.Tick.Sub(now); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
				continue // plan again: the clock may have stepped, or we were paused
			case <-ctx.Done():
				return nil
			}
		}
		t, err := st.claim(ctx, p, now)
		switch {
		case errors.Is(err, errTickTaken):
			last = p.Tick // by an earlier term of ours, or a leader whose claim we had not seen
			continue
		case err != nil && (errors.Is(err, ErrLost) || ctx.Err() != nil):
			return err
		case err != nil && retryable(err):
			attempt = st.retry(ctx, attempt)
			continue
		case err != nil:
			return err
		}
		attempt = 0
		last = p.Tick
		if p.Missed > 0 || p.Late {
			log.Info("zklock: schedule: missed ticks", "path", t.Node, "tick", p.Tick, "missed", p.Missed, "late", p.Late,
				"policy", cfg.missed.String())
		}
		var jobErr error
		if since := time.Since(t.sent); ctx.Err() != nil || since >= st.fresh() {
			// A leader paused between its claim and here may have been
			// deposed meanwhile: the job does not start late.
			jobErr = fmt.Errorf("%w: tick %s not started: its claim was answered %v ago, or the term ended",
				ErrLost, tickName(t.Time), since.Round(time.Millisecond))
		} else {
			jobErr = runJob(ctx, job, t)
		}
		// The outcome is written even if the term just ended (the check
		// decides), within a bound: the job may have ended with the term.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), st.fresh())
		err = st.finish(fctx, t, time.Now(), jobErr)
		cancel()
		if err != nil {
			log.Warn("zklock: schedule: outcome not recorded", "node", t.Node, "err", err)
			if errors.Is(err, ErrLost) {
				return err
			}
		}
		if err := st.prune(ctx); err != nil && ctx.Err() == nil {
			log.Warn("zklock: schedule: old claims not deleted", "path", t.Node, "err", err)
		}
	}
}

// runJob runs job for t with a context that ends with the term, and is
// cancelled once the job returns.
func runJob(ctx context.Context, job func(context.Context, Tick) error, t Tick) error {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	return job(tctx, t)
}

// retryable: a connection problem or a lost session state that the next
// attempt (on the same term) may get past.
func retryable(err error) bool {
	return isConnErr(err) || errors.Is(err, errNoTicksDir) || errors.Is(err, ErrUnreachable) || errors.Is(err, context.DeadlineExceeded)
}
