package zklock

// Acquiring: create our node, list the queue, decide by the rule, watch
// the one node (or, for a semaphore's leases, the directory) the rule
// names, and list again when that changes, until our node holds.
//
// The caller's goroutine only sleeps. Each step (the create with its
// pipelined listing, each later listing and the decision on it, arming a
// watch) runs on a goroutine of its own that ends with the step, and the
// caller sleeps in sleep, two frames below its own. A goroutine starts
// with a 2 KiB stack, of which about 1.1 KiB is usable by frames (the rest
// is the runtime's guard), and the runtime doubles it for good once a call
// chain needs more: it halves an idle stack only while a quarter of it
// would hold what is in use, which no goroutine asleep in a select can
// meet. A caller that made a request or sorted a listing itself would
// therefore sleep on 4 or 8 KiB of stack. A step's goroutine costs its
// record (under 0.5 KB, which the runtime keeps for the next goroutine) and
// none of its stack once it ends.
//
// The caller waits for every step to end, and each step ends with its
// requests, which call bounds by the acquire's context: a step never
// outlives the acquire.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// acquire queues a node and waits until it holds, ctx ends, or the session
// expires, then returns the registered hold. Every failure deletes the node
// it created (in the background if the connection is down). The caller's
// goroutine runs only this loop: each step (the create, each listing and
// the decision on it, arming a watch, registering the hold) runs on a
// goroutine of its own, and between steps the caller sleeps in sleep.
func (q *queue) acquire(ctx context.Context) (*Hold, error) {
	if err := q.s.waitReady(ctx); err != nil {
		return nil, err
	}
	w := &waiter{q: q, ctx: ctx, start: time.Now(), wk: wokeRelist, stepped: make(chan struct{}, 1)}
	w.run = w.step
	for {
		// w.run is a func value: starting the step allocates nothing here.
		// The acquire is over once finish ran: held never returns nil, nil.
		go w.run()
		if <-w.stepped; w.hold != nil || w.err != nil {
			return w.hold, w.err
		}
		w.wk = w.sleep()
	}
}

// waiter is one acquisition between its steps. Its fields are used by one
// goroutine at a time: a step's, then the caller's (sleep reads the
// channels, sets wk and, from the watch, ev), ordered by stepped.
type waiter struct {
	q       *queue
	ctx     context.Context // the acquire's: every step's requests end with it
	start   time.Time       // when the acquire began
	e       *entry          // our node, once created
	token   chan tokenRead  // the read of an adopted node's token, if one is under way
	attempt int             // listings failed in a row, for the backoff
	p       string          // the node watched; "" while none is
	jump    bool            // our node holds once p goes (the jump rule)
	local   *handoff        // the in-process handoff registration on p
	ch      <-chan zk.Event // p's data watch, once armed
	changed <-chan struct{} // closed at the session's next state change
	ev      zk.Event        // what ch fired with
	wk      woke            // what ended the last sleep
	hold    *Hold           // the acquire is over: hold, or err
	err     error
	run     func()        // step
	stepped chan struct{} // receives once per step, as it ends

	id         uint64 // the acquire's number (Event.Acquire), set by its first step
	registered bool   // EventAcquired was reported (a confirm may still fail the acquire)
}

// sleep waits until the armed watch fires, the node is handed to us within
// the session, the session's state changes, or ctx ends. The event is
// received into w, not into this frame, which is the caller's deepest.
func (w *waiter) sleep() woke {
	select {
	case <-w.local.done():
		return wokeHandedOff
	case w.ev = <-w.ch:
		return wokeFired
	case <-w.changed:
		return wokeChanged
	case <-w.ctx.Done():
		return wokeDone
	}
}

// held ends the acquire, whose wait ended with werr (nil: our node holds):
// it registers the hold, or deletes our node on any failure.
func (q *queue) held(w *waiter, werr error) (_ *Hold, err error) {
	e := w.e
	if e == nil { // the create failed
		return nil, werr
	}
	defer func() { e.first.take() }() // a step normally has; never leave its goroutine behind
	defer func() {
		// A node that is gone, or someone else's, is not ours to delete.
		if err != nil && !errors.Is(err, ErrNodeGone) {
			q.s.abandon(e.node(), e.sid)
		}
	}()
	if werr != nil {
		return nil, werr
	}
	h, err := q.s.newHold(w.ctx, q, e, w.start, w.id)
	if err != nil {
		return nil, err
	}
	w.registered = true
	if q.confirm {
		if err := q.s.confirm(w.ctx, h.h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// woke is what ended a wait on a watched node.
type woke uint8

const (
	armed         woke = iota // the watch is set
	wokeGone                  // the node went
	wokeHandedOff             // its holder, of our session, handed off to us
	wokeRearm                 // it changed: watch it again
	wokeFired                 // its watch fired, with w.ev
	wokeChanged               // the session's state changed
	wokeRelist                // a watch was lost or the session changed: list again
	wokeDone                  // ctx ended
)

// step runs on a goroutine of its own: the first creates our node, every
// one settles what ended the caller's last sleep (w.wk), then lists and
// decides until our node holds, the wait fails, or a watch is armed for
// the next sleep. The last one, through finish, registers the hold (or
// deletes the node) and sets w.hold or w.err.
func (w *waiter) step() {
	defer func() { w.stepped <- struct{}{} }()
	ctx, wk := w.ctx, w.wk
	if w.e == nil {
		w.q.started(w)
		var err error
		if w.e, err = w.q.create(ctx); err != nil {
			w.e = nil
			w.finish(err)
			return
		}
		if w.e.stat == nil {
			w.readToken()
		}
	}
	for {
		if wk == wokeFired {
			switch w.ev.Type {
			case zk.EventNodeDeleted:
				wk = wokeGone
			case zk.EventNodeDataChanged, zk.EventNodeCreated:
				wk = wokeRearm
			default:
				wk = wokeRelist
			}
		}
		switch wk {
		case wokeChanged:
			state, _, changed := w.q.s.snapshot()
			if state == StateSuspended {
				w.changed = changed // sleep on: the watch still stands
				return
			}
			// Reconnected (go-zookeeper may have failed to re-arm our
			// watch), expired or closed: list again.
			wk = wokeRelist
			continue
		case wokeRearm:
			if wk = w.arm(ctx); wk == armed {
				return
			}
			continue
		case wokeHandedOff, wokeGone:
			held := w.q.jumped(w.e, wk == wokeHandedOff || w.jump || w.local.handedOff())
			w.unwatch()
			if held {
				w.finish(nil)
				return
			}
		case wokeDone:
			w.unwatch()
			w.finish(context.Cause(ctx))
			return
		default:
			w.unwatch()
		}
		m, p, err := w.q.next(ctx, w.e, &w.attempt)
		switch m {
		case moveHold:
			w.finish(err)
			return
		case moveRelist:
			wk = wokeRelist
		case moveAdopt:
			wk = w.adopt(ctx, p)
		case moveWatchQueue:
			// One waiter at a time waits on a directory (under a
			// semaphore's internal lock), so it waits on this goroutine.
			if held, err := w.q.watchQueue(ctx, w.e); err != nil || held {
				w.finish(err)
				return
			}
			wk = wokeRelist
		default:
			w.watch(p, m == moveJump)
			wk = wokeRearm
		}
	}
}

// tokenRead is the outcome of readToken's read.
type tokenRead struct {
	stat *zk.Stat
	err  error
}

// readToken starts reading the token of a node adopted after a lost create
// reply (its entry has no stat): it is read alongside the first listing, so
// it adds no round trip. finish waits for it.
func (w *waiter) readToken() {
	w.token = make(chan tokenRead, 1)
	ctx, node := w.ctx, w.e.node()
	go func() {
		stat, err := w.q.s.stat(ctx, node)
		w.token <- tokenRead{stat, err}
	}()
}

// finish ends the acquire once its wait ended with err (nil: our node
// holds) and the adopted node's token, if one was being read, is known.
func (w *waiter) finish(err error) {
	if w.token != nil {
		r := <-w.token
		w.token = nil
		switch {
		case err != nil:
		case errors.Is(r.err, zk.ErrNoNode) || r.err == nil && r.stat.EphemeralOwner != w.e.sid:
			err = fmt.Errorf("%w: %s", ErrNodeGone, w.e.node())
		case r.err != nil:
			err = fmt.Errorf("zklock: read %s: %w", w.e.node(), r.err)
		default:
			w.e.stat = r.stat
		}
	}
	w.hold, w.err = w.q.held(w, err)
	if w.err != nil {
		w.q.failed(w)
	}
}

// watch starts watching the node at p, registered for an in-process handoff
// where the queue has the jump rule.
func (w *waiter) watch(p string, jump bool) {
	w.p, w.jump = p, jump
	if w.q.jump {
		w.local = w.q.s.awaitHandoff(p)
	}
}

// unwatch ends the watch of w.p, if any.
func (w *waiter) unwatch() {
	if w.local != nil {
		w.q.s.dropHandoff(w.p)
	}
	w.p, w.jump, w.local, w.ch, w.changed = "", false, nil, nil, nil
}

// arm sets the data watch on w.p.
func (w *waiter) arm(ctx context.Context) woke {
	_, sid, changed := w.q.s.snapshot()
	if sid != w.e.sid { // our session ended since the listing: a watch now would be the next one's
		return wokeRelist
	}
	_, _, ch, err := w.q.s.readWatch(ctx, w.p)
	switch {
	case err != nil && ctx.Err() != nil:
		return wokeDone
	case errors.Is(err, zk.ErrNoNode):
		return wokeGone
	case err != nil:
		return wokeRelist // listing again reports or retries the error
	}
	w.ch, w.changed = ch, changed
	return armed
}
