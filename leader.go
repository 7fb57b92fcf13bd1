package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// A LeaderElection is one participant in a leader election at a path:
// Curator's LeaderSelector on the wire, that is a Mutex with the
// participant's id as node data, so participants, Curator LeaderSelectors
// and Mutexes on one path take turns, the leader holding the lock; it does
// not exclude a LeaderLatch. At most one term is live at a time, provided
// each leader learns of its loss in time: one paused past its session may
// act late, so fence writes made as leader with Leadership.Token. Its
// session should use WithLossLimit(0) (see the package doc). It is safe for
// concurrent use. See docs/protocol.md#leader-election.
type LeaderElection struct {
	q  queue
	id string

	running atomic.Bool
	mu      sync.Mutex
	term    *Leadership   // the current term of Run, nil when not leading
	held    *Hold         // the latest hold Campaign or TryCampaign returned
	changed chan struct{} // closed and replaced when leading may have changed
}

// NewLeaderElection returns a participant in the election at path on s with
// id as its node data (by default this host's address, as Curator's). opts
// are WithACL, WithRevocable (which empties the data), WithRequeue and
// WithHealthCheck. It does no I/O and returns an error for a nil session,
// an invalid path or an invalid health check.
func NewLeaderElection(s *Session, path, id string, opts ...Option) (*LeaderElection, error) {
	if id != "" {
		opts = append(opts[:len(opts):len(opts)], WithData([]byte(id)))
	}
	opts = append(opts[:len(opts):len(opts)], WithOwner("")) // the data is the participant id
	q, err := newQueue(s, path, path, recipe{mark: markLock, decide: exclusive, jump: true, confirm: true}, opts)
	if err == nil {
		err = q.cfg.health.validate()
	}
	if err != nil {
		return nil, err
	}
	return &LeaderElection{q: q, id: string(q.cfg.data), changed: make(chan struct{})}, nil
}

// IsLeader reports whether this participant leads now: Run's function runs
// in a term whose context has not ended, or the latest hold Campaign or
// TryCampaign returned is valid (not released, not lost). It does no I/O,
// so it is as current as the session's knowledge: a leader cut off from
// ZooKeeper leads until the loss limit says otherwise (with WithLossLimit(0),
// not past the first suspension). It is safe to call from any goroutine,
// for a readiness probe or a metric.
func (e *LeaderElection) IsLeader() bool {
	leading, _ := e.Leading()
	return leading
}

// Leading returns what IsLeader reports and a channel closed at the next
// change of it: a term or hold that starts or ends. The channel may also
// close without a change; call Leading again to read the new state:
//
//	for {
//		leading, changed := e.Leading()
//		setReady(leading)
//		select {
//		case <-changed:
//		case <-ctx.Done():
//			return
//		}
//	}
func (e *LeaderElection) Leading() (bool, <-chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.term != nil:
		return e.term.ctx.Err() == nil, e.changed
	case e.held != nil:
		return e.held.Err() == nil, e.changed
	}
	return false, e.changed
}

// notify wakes the callers waiting on Leading's channel.
func (e *LeaderElection) notify() {
	e.mu.Lock()
	defer e.mu.Unlock()
	close(e.changed)
	e.changed = make(chan struct{})
}

// track makes h, a hold Campaign returned, the one IsLeader reports on,
// until it ends.
func (e *LeaderElection) track(h *Hold, err error) (*Hold, error) {
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.held = h
	e.mu.Unlock()
	e.notify()
	context.AfterFunc(h.Context(), e.notify) // the hold's context ends with it
	return h, nil
}

// Path returns the election path.
func (e *LeaderElection) Path() string { return e.q.path }

// ID returns this participant's id: the data its node carries.
func (e *LeaderElection) ID() string { return e.id }

// A Leadership is one term as leader, given to the function Run runs.
type Leadership struct {
	hold   *Hold
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// Context returns the term's context (the one given to the function).
func (l *Leadership) Context() context.Context { return l.ctx }

// Token returns the term's fencing token: the czxid of the leader's node,
// strictly greater than every earlier leader's on this path.
func (l *Leadership) Token() int64 { return l.hold.Token() }

// Era returns the era of the ensemble that holds the leader's node; see
// Hold.Era.
func (l *Leadership) Era(ctx context.Context) (string, error) { return l.hold.Era(ctx) }

// Hold returns the lock hold behind the term, for Guard, Node, SessionID.
// Run releases it when the function returns; do not release it yourself.
func (l *Leadership) Hold() *Hold { return l.hold }

// Resign ends this term: its context is cancelled with ErrResigned and the
// node deleted once the function returns. It does not wait, so the function
// itself may call it.
func (l *Leadership) Resign() { l.cancel(ErrResigned) }

// Resign ends the current term, as Leadership.Resign does. It returns
// ErrNotHeld if this participant is not leading now.
func (e *LeaderElection) Resign() error {
	e.mu.Lock()
	l := e.term
	e.mu.Unlock()
	if l == nil {
		return ErrNotHeld
	}
	l.Resign()
	return nil
}

// Leader returns the current leader, the first participant in queue order,
// or ErrNoLeader if no one campaigns.
func (e *LeaderElection) Leader(ctx context.Context) (Participant, error) { return e.q.leader(ctx) }

// Participants returns the participants in queue order, the leader first.
func (e *LeaderElection) Participants(ctx context.Context) ([]Participant, error) {
	return e.q.participants(ctx)
}

// ID returns a leader-election participant's id: its node data as text.
func (p Participant) ID() string { return string(p.Data) }

// Run campaigns for leadership and, once leader, runs fn with a context
// cancelled the moment leadership may be lost: the session expired, the
// connection stayed suspended past the loss limit, the leader's node
// vanished or changed owner, revocation was asked (WithRevocable), Resign
// was called, or ctx ended. When fn returns the node is deleted, so the next
// leader starts only after fn has returned or its term was lost. Before fn
// starts and after every reconnect, the node is checked to be this
// session's (Curator's CURATOR-696 double leader).
//
// Run returns ErrRunning if already running. Without WithRequeue (see
// there) it leads at most once and returns fn's error; nil if fn returned
// nil while leader or after Resign; an error wrapping ErrLost if fn returned
// nil after the term was lost; or why the campaign failed: ctx's cause,
// ErrSessionExpired, ErrClosed, a ZooKeeper error.
func (e *LeaderElection) Run(ctx context.Context, fn func(ctx context.Context, l *Leadership) error) error {
	if ctx == nil || fn == nil {
		return fmt.Errorf("%w: nil context or function", ErrInvalidArgument)
	}
	if !e.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer e.running.Store(false)
	for attempt := 0; ; {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		h, err := e.q.cfg.health.campaign(context.WithValue(ctx, electionKey{e.q.dir}, true), e.q.campaign)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return context.Cause(ctx)
			case e.q.s.State() == StateClosed && !errors.Is(err, ErrClosed):
				return fmt.Errorf("%w: %w", ErrClosed, err)
			case e.q.cfg.requeue && requeueable(err):
				e.q.s.observe(Event{Kind: EventRetry, Path: e.q.path, Err: err, Recipe: RecipeElection, Context: ctx})
				attempt = e.q.s.cfg.retry.wait(ctx, attempt)
				continue
			}
			return err
		}
		attempt = 0
		var unhealthy atomic.Bool
		live, err := e.lead(ctx, h, e.q.cfg.health.guard(fn, &unhealthy))
		if unhealthy.Load() { // resigned for its health: cool off, campaign again
			if e.q.cfg.health.coolOff(ctx) != nil {
				return context.Cause(ctx)
			}
			continue
		}
		if !e.q.cfg.requeue || (err != nil && live) {
			return err
		}
	}
}

// Campaign waits until this participant leads, ctx ends or the session
// expires, and returns the hold behind the term, for callers that manage
// the term themselves (`zklock elect`): it lasts until the hold is released
// or lost, Resign does not apply, and the CURATOR-696 check is Run's. On
// failure it returns a nil hold and an error, as Mutex.Lock does.
func (e *LeaderElection) Campaign(ctx context.Context) (*Hold, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	start := e.q.s.mark()
	h, err := e.q.cfg.health.campaign(context.WithValue(ctx, electionKey{e.q.dir}, true), e.q.campaign)
	return e.track(h, e.q.unreachable(err, start))
}

// TryCampaign is Campaign that never waits: if another participant leads
// or queues, it returns ErrLocked having written nothing.
func (e *LeaderElection) TryCampaign(ctx context.Context) (*Hold, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	if err := e.q.cfg.health.tryCheck(ctx); err != nil {
		return nil, err
	}
	start := e.q.s.mark()
	h, err := e.q.tryOnly().campaign(context.WithValue(ctx, electionKey{e.q.dir}, true))
	return e.track(h, e.q.unreachable(err, start))
}

// requeueable: the campaign failed for a reason that a new campaign, on
// the session's next ZooKeeper session or connection, can get past.
func requeueable(err error) bool {
	return errors.Is(err, ErrSessionExpired) || errors.Is(err, ErrNodeGone) ||
		errors.Is(err, ErrLost) || errors.Is(err, ErrSuspended) || isConnErr(err)
}

// campaign is the term of any leader recipe on q: a new acquisition, never
// a re-entry (a context carrying a hold of this path still campaigns as a
// new participant), confirmed by the engine (CURATOR-696, queue.confirm).
func (q *queue) campaign(ctx context.Context) (*Hold, error) {
	if err := q.s.begin(ctx); err != nil {
		return nil, err
	}
	return q.acquire(ctx)
}

// lead runs one term. It returns whether the term was still live when fn
// returned, and fn's result (or the loss).
func (e *LeaderElection) lead(ctx context.Context, h *Hold, fn func(context.Context, *Leadership) error) (live bool, err error) {
	tctx, cancel := context.WithCancelCause(h.Context())
	l := &Leadership{hold: h, ctx: tctx, cancel: cancel}
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	revokeDone := make(chan struct{})
	go func() {
		defer close(revokeDone)
		select {
		case <-h.Revoked(): // nil, never ready, when not revocable
			cancel(ErrRevoked)
		case <-tctx.Done():
		}
		e.notify() // the term is over, or about to be
	}()
	e.mu.Lock()
	e.term = l
	e.mu.Unlock()
	e.notify()
	defer func() {
		e.mu.Lock()
		e.term = nil
		e.mu.Unlock()
		stop()
		cause := context.Cause(tctx) // why the term ended, before the release's own cause
		cancel(ErrReleased)
		<-revokeDone
		if !errors.Is(cause, ErrResigned) && !errors.Is(cause, ErrRevoked) {
			cause = nil
		}
		if rerr := h.releaseFor(cause); rerr != nil && !errors.Is(rerr, ErrLost) && !errors.Is(rerr, ErrNotHeld) {
			e.q.s.log.Warn("zklock: leader release", "node", h.Node(), "err", rerr)
		}
	}()
	if err := h.Err(); err != nil { // lost between the check and here
		return false, err
	}
	err = fn(tctx, l)
	if tctx.Err() == nil {
		return true, err
	}
	if cause := context.Cause(tctx); err == nil && errors.Is(cause, ErrLost) {
		err = cause
	}
	return false, err
}
