package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// A LeaderLatch is one participant in a leader latch at a path: Curator's
// LeaderLatch on the wire, so latches of either library on one path agree
// on the leader and never lead at once (given each learns of its loss in
// time). It does not exclude a LeaderElection. A participant stays queued
// from Start until Close; each stretch of leadership is a term, a Hold from
// Await whose Done and Err are the loss signal and whose Token fences writes
// made as leader. After a loss it joins again at the back of the queue, so
// a later term has a greater token. Its session should use WithLossLimit(0)
// (see the package doc). A LeaderLatch is safe for concurrent use.
// See docs/protocol.md#leader-latch.
type LeaderLatch struct {
	q  queue
	id string

	mu      sync.Mutex
	started bool
	closed  bool
	term    *Hold         // the current term, nil when not leading
	changed chan struct{} // closed and replaced when term or the state changes
	stopErr error         // why the latch stopped, once it has
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed when the latch's goroutine has left the queue
}

// NewLeaderLatch returns a latch participant at path on s with id as its
// node data (what Leader, Participants and Curator's getId report). Of the
// lock options only WithACL and WithHealthCheck apply. It does no I/O and
// returns an error for a nil session, an invalid path or an invalid health
// check.
func NewLeaderLatch(s *Session, path, id string, opts ...Option) (*LeaderLatch, error) {
	q, err := newQueue(s, path, path, recipe{mark: markLatch, decide: exclusive, jump: true, confirm: true}, opts)
	if err == nil {
		err = q.cfg.health.validate()
	}
	if err != nil {
		return nil, err
	}
	q.cfg.data, q.cfg.dataSet, q.cfg.revocable, q.cfg.failOpen = []byte(id), true, false, 0
	return &LeaderLatch{q: q, id: id, changed: make(chan struct{}), done: make(chan struct{})}, nil
}

// Path returns the latch path.
func (l *LeaderLatch) Path() string { return l.q.path }

// ID returns this participant's id: the data its node carries.
func (l *LeaderLatch) ID() string { return l.id }

// Start joins the latch's queue and returns at once; the participant then
// stays queued, leading whenever its node is first, until Close, ctx ends
// or the session is closed. A join that fails on a connection problem or an
// expiry is retried with the session's backoff; one that fails for good
// (bad ACL, missing credentials) stops the latch, and Await reports why.
// It returns ErrRunning if started before, ErrLatchClosed after Close.
func (l *LeaderLatch) Start(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return ErrLatchClosed
	case l.started:
		return ErrRunning
	}
	l.started = true
	lctx, cancel := context.WithCancelCause(ctx)
	l.cancel = cancel
	go l.run(lctx)
	return nil
}

// run is the latch's goroutine: join, lead while the term lasts, join again.
func (l *LeaderLatch) run(ctx context.Context) {
	defer close(l.done)
	stop := func(err error) {
		l.mu.Lock()
		l.term, l.stopErr = nil, err
		l.notifyLocked()
		l.mu.Unlock()
	}
	for attempt := 0; ; {
		h, err := l.q.cfg.health.campaign(ctx, l.q.campaign)
		switch {
		case ctx.Err() != nil:
			if h != nil {
				l.release(h)
			}
			stop(latchStopped(ctx))
			return
		case err != nil && l.q.s.State() == StateClosed:
			stop(ErrClosed)
			return
		case err != nil && requeueable(err):
			l.q.s.observe(Event{Kind: EventRetry, Path: l.q.path, Err: err, Recipe: RecipeLatch, Context: ctx})
			attempt = l.q.s.cfg.retry.wait(ctx, attempt)
			continue
		case err != nil:
			stop(fmt.Errorf("zklock: leader latch %s: %w", l.q.path, err))
			return
		}
		attempt = 0
		l.mu.Lock()
		l.term = h
		l.notifyLocked()
		l.mu.Unlock()
		select {
		case <-h.Done(): // lost: join again, at the back of the queue
			l.mu.Lock()
			l.term = nil
			l.notifyLocked()
			l.mu.Unlock()
		case err := <-l.q.cfg.health.failing(h.Context()): // resign, cool off, join again
			l.mu.Lock()
			l.term = nil
			l.notifyLocked()
			l.mu.Unlock()
			if rerr := h.releaseFor(err); rerr != nil && !errors.Is(rerr, ErrLost) && !errors.Is(rerr, ErrNotHeld) {
				l.q.s.log.Warn("zklock: leader latch release", "node", h.Node(), "err", rerr)
			}
			_ = l.q.cfg.health.coolOff(ctx) // an ended ctx is seen by the next campaign
		case <-ctx.Done():
			l.mu.Lock()
			l.term = nil // not leading from here on, before the node goes
			l.notifyLocked()
			l.mu.Unlock()
			l.release(h)
			stop(latchStopped(ctx))
			return
		}
	}
}

func latchStopped(ctx context.Context) error {
	if cause := context.Cause(ctx); !errors.Is(cause, ErrLatchClosed) {
		return fmt.Errorf("%w: %w", ErrLatchClosed, cause)
	}
	return ErrLatchClosed
}

func (l *LeaderLatch) release(h *Hold) {
	if err := h.Release(); err != nil && !errors.Is(err, ErrLost) && !errors.Is(err, ErrNotHeld) {
		l.q.s.log.Warn("zklock: leader latch release", "node", h.Node(), "err", err)
	}
}

func (l *LeaderLatch) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// Await waits until this participant leads and returns the current term, a
// Hold whose Done, Err and Context tell when it ends; every caller gets the
// same Hold for one term. The latch owns it: releasing it ends the term and
// requeues the latch; call Close to leave. On failure Await returns a nil
// Hold and ctx's cause, an error wrapping ErrLatchClosed (after Close or
// when Start's context ended), ErrClosed, why the latch stopped, or an error
// wrapping ErrInvalidArgument if the latch was never started.
func (l *LeaderLatch) Await(ctx context.Context) (*Hold, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	for {
		l.mu.Lock()
		term, stopErr, started, changed := l.term, l.stopErr, l.started, l.changed
		closed := l.closed
		l.mu.Unlock()
		switch {
		case term != nil && term.Err() == nil:
			return term, nil
		case stopErr != nil:
			return nil, stopErr
		case closed:
			return nil, ErrLatchClosed
		case !started:
			return nil, fmt.Errorf("%w: leader latch %s not started", ErrInvalidArgument, l.q.path)
		}
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
		select { // a term that ended is cleared, with a change, by run
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// HasLeadership reports whether this participant leads now: it has a term
// whose Hold is still valid. It does no I/O.
func (l *LeaderLatch) HasLeadership() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.term != nil && l.term.Err() == nil
}

// IsLeader is HasLeadership, under the name LeaderElection uses too.
func (l *LeaderLatch) IsLeader() bool { return l.HasLeadership() }

// Leading returns what HasLeadership reports and a channel closed at the
// next change of the latch's state: a term that starts or ends, Close, or
// the latch stopping. The channel may also close without a change of
// leadership; call Leading again to read the new state (see
// LeaderElection.Leading). A term that is lost reads as not leading at
// once, and its channel closes once the latch has noticed (it then joins
// again).
func (l *LeaderLatch) Leading() (bool, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.term != nil && l.term.Err() == nil, l.changed
}

// Close leaves the latch: the current term ends with ErrReleased and the
// node is deleted (in the background if the connection is down), and Close
// waits until the latch's goroutine is gone. It is idempotent, returns nil,
// and may be called before Start (the latch can then never start).
func (l *LeaderLatch) Close() error {
	l.mu.Lock()
	l.closed = true
	started, cancel := l.started, l.cancel
	l.notifyLocked()
	l.mu.Unlock()
	if !started {
		return nil
	}
	cancel(ErrLatchClosed)
	<-l.done
	return nil
}

// Leader returns the current leader, the first participant in queue order
// whichever library's latch it is, or ErrNoLeader if no one takes part.
func (l *LeaderLatch) Leader(ctx context.Context) (Participant, error) { return l.q.leader(ctx) }

// Participants returns the latch's participants in queue order, the leader
// first; ID gives each one's id.
func (l *LeaderLatch) Participants(ctx context.Context) ([]Participant, error) {
	return l.q.participants(ctx)
}
