package zklock

// WithFailOpen: once ZooKeeper has been unreachable for the bound, an
// acquire gives up and the caller runs without the lock.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// lockFailOpen is obtain for WithFailOpen: once the session has been
// unreachable for the bound, the acquire gives up and the caller runs
// with a hold that excludes no one (failopen.go).
func (q *queue) lockFailOpen(ctx context.Context) (*Hold, error) {
	start := q.s.mark()
	actx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.s.untilUnreachable(actx, q.cfg.failOpen, cancel)
	}()
	h, err := q.reenterOrAcquire(actx)
	cancel(nil)
	<-done
	if err == nil {
		return h, nil
	}
	if ctx.Err() != nil || !errors.Is(context.Cause(actx), ErrUnreachable) {
		return h, q.unreachable(err, start)
	}
	return q.s.runUnlocked(context.WithoutCancel(ctx), q.path, q.cfg.failOpen, start)
}

// runUnlocked gives up an acquire of path that found the session
// unreachable for bound: it returns a hold that excludes no one, with
// ErrUnlocked, whose context carries ctx's values. A TLS refusal or a
// server that is not ZooKeeper is a configuration error, not a reason to
// run without the lock; nor is a server that broke the protocol since
// start, the acquire's beginning.
func (s *Session) runUnlocked(ctx context.Context, path string, bound time.Duration, start mark) (*Hold, error) {
	f := s.failures.latest()
	if _, broke := s.failures.since(start); broke != nil {
		f = broke
	}
	if f.configuration() {
		return nil, fmt.Errorf("%w (acquiring %s: WithFailOpen runs without the lock only when ZooKeeper is unreachable)", f, path)
	}
	uctx, ucancel := context.WithCancelCause(ctx)
	s.log.Warn("zklock: zookeeper unreachable, running without the lock", "path", path, "bound", bound)
	st := &hold{s: s, path: path, ctx: uctx, cancel: ucancel, count: 1, acquired: time.Now()}
	st.onEnd = func() {}
	return &Hold{h: st, unlocked: true}, fmt.Errorf("%w (%s)", ErrUnlocked, path)
}

// untilUnreachable cancels ctx with ErrUnreachable once the session has been
// continuously not connected for bound, no server having been reached (a
// handshake, or a violation after one) in that time; it returns when ctx
// ends.
func (s *Session) untilUnreachable(ctx context.Context, bound time.Duration, cancel context.CancelCauseFunc) {
	t := time.NewTimer(bound)
	defer t.Stop()
	running := true
	m := s.mark()
	for {
		state, _, changed := s.snapshot()
		if reached, _ := s.failures.since(m); state == StateConnected || reached {
			m, running = s.mark(), false
			t.Stop()
		}
		if state != StateConnected && !running {
			t.Reset(bound)
			running = true
		}
		select {
		case <-changed:
		case <-t.C:
			cancel(ErrUnreachable)
			return
		case <-ctx.Done():
			return
		}
	}
}
