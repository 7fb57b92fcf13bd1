package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrUnhealthy is the cause of a term that ended, and of a campaign that
// was withdrawn, because the participant's health check (WithHealthCheck)
// failed its allowed number of times in a row. It wraps ErrResigned: the
// leader steps down as on Resign, and its node is deleted once its work
// has stopped.
var ErrUnhealthy = fmt.Errorf("zklock: health check failing: %w", ErrResigned)

// A HealthCheck gates leadership on the health of the job a leader runs:
// Check runs every Interval (each run bounded by Interval), and Failures
// runs in a row that fail make the participant unhealthy; a run that
// passes starts the count over. See WithHealthCheck.
type HealthCheck struct {
	Check    func(ctx context.Context) error
	Interval time.Duration
	Failures int
}

// WithHealthCheck gates a LeaderElection or a LeaderLatch on check (other
// recipes ignore it). A participant campaigns only once check passes; a
// standby (queued, not leading) whose check fails failures times in a row,
// interval apart, leaves the queue and joins again, at the back, once check
// passes. A leader whose check fails failures times in a row resigns: the
// term's context (LeaderElection.Run) is cancelled with a cause wrapping
// ErrUnhealthy and the node deleted once the function has returned; a
// latch's term ends as on release (the hold's Err is ErrReleased, its
// EventReleased has the cause ErrUnhealthy). It then waits interval (the
// cool-off) and campaigns again once check passes, with or without
// WithRequeue. A participant whose check keeps passing never resigns for
// it. A leader cut off from a failing job is so replaced within about
// interval × failures, plus one run of check, plus a handover.
//
// check is given a context that ends after interval; it must be safe for
// concurrent use with itself only in that a run may still be ending when
// the next starts after its context ended. Campaign waits for a passing
// check and leaves the queue as a standby does, but the term it returns is
// the caller's: watch it with HealthCheck.Failing and release it (as
// `zklock elect --health-cmd` does, once its CMD has stopped). TryCampaign
// runs check once and, if it fails, returns an error wrapping ErrUnhealthy
// having written nothing. A nil check, an interval <= 0 or failures < 1 is refused by the
// recipe's constructor with an error wrapping ErrInvalidArgument.
func WithHealthCheck(check func(ctx context.Context) error, interval time.Duration, failures int) Option {
	return func(c *lockConfig) {
		c.health = &HealthCheck{Check: check, Interval: interval, Failures: failures}
	}
}

// validate refuses a check that cannot run; a nil c (no check) is valid.
func (c *HealthCheck) validate() error {
	switch {
	case c == nil:
		return nil
	case c.Check == nil:
		return fmt.Errorf("%w: nil health check", ErrInvalidArgument)
	case c.Interval <= 0:
		return fmt.Errorf("%w: health check interval %v, want > 0", ErrInvalidArgument, c.Interval)
	case c.Failures < 1:
		return fmt.Errorf("%w: health check failures %d, want >= 1", ErrInvalidArgument, c.Failures)
	}
	return nil
}

// Failing runs the check every Interval, the first one Interval from now,
// until ctx ends, and returns a channel that receives, once Failures runs
// in a row have failed, an error wrapping ErrUnhealthy and the last run's
// error; the checks then stop. The channel is buffered and never closed:
// nothing is sent if ctx ends first. Its goroutine ends with ctx, or after
// the send.
func (c HealthCheck) Failing(ctx context.Context) <-chan error {
	out := make(chan error, 1)
	go func() {
		t := time.NewTicker(c.Interval)
		defer t.Stop()
		failed := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			err := c.run(ctx)
			switch {
			case ctx.Err() != nil:
				return
			case err == nil:
				failed = 0
				continue
			}
			if failed++; failed >= c.Failures {
				out <- fmt.Errorf("%w: %d checks in a row failed, the last with: %w", ErrUnhealthy, failed, err)
				return
			}
		}
	}()
	return out
}

// run is one run of the check, bounded by Interval.
func (c HealthCheck) run(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, c.Interval)
	defer cancel()
	return c.Check(rctx)
}

// await runs the check at once, then every Interval, until a run passes
// (nil) or ctx ends (its cause).
func (c HealthCheck) await(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if c.run(ctx) == nil && ctx.Err() == nil {
			return nil
		}
		if err := c.coolOff(ctx); err != nil {
			return err
		}
	}
}

// coolOff waits Interval, or until ctx ends (its cause).
func (c HealthCheck) coolOff(ctx context.Context) error {
	t := time.NewTimer(c.Interval)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// failing is Failing for a leader's term, or nil (never ready) without a
// check.
func (c *HealthCheck) failing(ctx context.Context) <-chan error {
	if c == nil {
		return nil
	}
	return c.Failing(ctx)
}

// campaign runs campaign while the check passes: it waits for a passing
// run, then campaigns with a context that ends (cause ErrUnhealthy) after
// Failures failing runs in a row, and after such a withdrawal waits for a
// passing run again. Without a check (nil c) it is campaign(ctx).
func (c *HealthCheck) campaign(ctx context.Context, campaign func(context.Context) (*Hold, error)) (*Hold, error) {
	if c == nil {
		return campaign(ctx)
	}
	for {
		if err := c.await(ctx); err != nil {
			return nil, err
		}
		cctx, cancel := context.WithCancelCause(ctx)
		wctx, stop := context.WithCancel(cctx)
		failing := c.Failing(wctx)
		go func() {
			select {
			case err := <-failing:
				cancel(err)
			case <-wctx.Done():
			}
		}()
		h, err := campaign(cctx) // a hold does not end with cctx: it keeps only its values
		withdrawn := errors.Is(context.Cause(cctx), ErrUnhealthy) && ctx.Err() == nil
		stop()
		cancel(nil)
		if err != nil && withdrawn {
			continue
		}
		return h, err
	}
}

// tryCheck is the check TryCampaign runs once before its attempt: nil
// without a check or when it passes, else an error wrapping ErrUnhealthy.
func (c *HealthCheck) tryCheck(ctx context.Context) error {
	if c == nil {
		return nil
	}
	if err := c.run(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrUnhealthy, err)
	}
	return nil
}

// guard wraps a term's function so that Failures failing runs in a row
// resign the term with ErrUnhealthy; resigned then reports true. Without a
// check it is fn.
func (c *HealthCheck) guard(fn func(context.Context, *Leadership) error, resigned *atomic.Bool) func(context.Context, *Leadership) error {
	if c == nil {
		return fn
	}
	return func(ctx context.Context, l *Leadership) error {
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		failing := c.Failing(wctx)
		go func() {
			select {
			case err := <-failing:
				resigned.Store(true)
				l.cancel(err)
			case <-wctx.Done():
			}
		}()
		return fn(ctx, l)
	}
}
