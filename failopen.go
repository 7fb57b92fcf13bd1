package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// unreachable wraps an acquire's error when it ended while the session was
// not connected, so callers can tell "ZooKeeper is down" from "the lock was
// busy until the deadline".
func (q *queue) unreachable(err error) error {
	if err == nil || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrClosed) {
		return err
	}
	if q.s.State() == StateClosed { // the session closed under the call
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !isConnErr(err) {
		return err
	}
	if state, _, _ := q.s.snapshot(); state == StateConnected {
		return err
	}
	switch f := q.s.connectFailure(); {
	case f == nil:
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	case errors.Is(f, ErrTLSHandshake): // a configuration error, not unreachable
		return fmt.Errorf("%w; %w", err, f)
	default:
		return fmt.Errorf("%w: %w; %w", ErrUnreachable, err, f)
	}
}

// lockFailOpen runs an acquire that gives up, with a non-exclusive hold,
// once the session has been unreachable for the fail-open bound.
func (q *queue) lockFailOpen(ctx context.Context) (*Hold, error) {
	actx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.s.untilUnreachable(actx, q.cfg.failOpen, cancel)
	}()
	h, err := q.reenterOrAcquire(actx)
	cancel(nil)
	<-done
	if err == nil || !errors.Is(context.Cause(actx), ErrUnreachable) || ctx.Err() != nil {
		return h, err
	}
	if f := q.s.connectFailure(); f != nil && errors.Is(f, ErrTLSHandshake) {
		// The servers answer; the configuration is wrong: not a reason to
		// run without the lock.
		return nil, fmt.Errorf("%w (acquiring %s: WithFailOpen runs without the lock only when ZooKeeper is unreachable)", f, q.path)
	}
	uctx, ucancel := context.WithCancelCause(context.WithoutCancel(ctx))
	q.s.log.Warn("zklock: zookeeper unreachable, running without the lock", "path", q.path, "bound", q.cfg.failOpen)
	st := &hold{s: q.s, path: q.path, ctx: uctx, cancel: ucancel, count: 1, acquired: time.Now()}
	st.onEnd = func() {}
	return &Hold{h: st, unlocked: true}, fmt.Errorf("%w (%s)", ErrUnlocked, q.path)
}

// untilUnreachable cancels ctx with ErrUnreachable once the session has been
// continuously not connected for bound; it returns when ctx ends.
func (s *Session) untilUnreachable(ctx context.Context, bound time.Duration, cancel context.CancelCauseFunc) {
	var timer <-chan time.Time
	for {
		state, _, changed := s.snapshot()
		if state == StateConnected {
			timer = nil
		} else if timer == nil {
			t := time.NewTimer(bound)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-changed:
		case <-timer:
			cancel(ErrUnreachable)
			return
		case <-ctx.Done():
			return
		}
	}
}
