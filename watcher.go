package zklock

// Acquiring: obtain is every reentrant recipe's entry, acquire the one loop,
// its steps in the order it runs them (docs/internals.md#the-acquire-loop).

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/go-zookeeper/zk"
)

// obtain is the acquire of every reentrant recipe: re-enter the hold ctx
// carries for q, or acquire a new one.
func obtain(ctx context.Context, q *queue) (*Hold, error) {
	if err := q.s.begin(ctx); err != nil {
		return nil, err
	}
	if q.cfg.failOpen <= 0 {
		m := q.s.mark()
		h, err := q.reenterOrAcquire(ctx)
		if err != nil {
			return nil, q.unreachable(err, m)
		}
		return h, nil
	}
	return q.lockFailOpen(ctx)
}

// unreachable wraps an acquire's error when it ended while no server
// could be reached since m, the acquire's start, so callers can tell
// "ZooKeeper is down" from "the lock was busy until the deadline". A
// server reached during the acquire, even one that then broke the
// protocol, makes its failure anything but "unreachable".
func (q *queue) unreachable(err error, m mark) error {
	if err == nil || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrClosed) {
		return err
	}
	if q.s.State() == StateClosed { // the session closed under the call
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !isConnErr(err) {
		return err
	}
	reached, broke := q.s.failures.since(m)
	if broke != nil { // connected again or not, a server broke the protocol: say so
		return fmt.Errorf("%w; %w", err, broke)
	}
	if state, _, _ := q.s.snapshot(); state == StateConnected {
		return err
	}
	switch f := q.s.failures.latest(); {
	case reached && f != nil:
		return fmt.Errorf("%w; %w (a server was reached during the acquire: not unreachable)", err, f)
	case reached:
		return fmt.Errorf("%w (a server was reached during the acquire: not unreachable)", err)
	case f == nil:
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	case f.configuration(): // not unreachable
		return fmt.Errorf("%w; %w", err, f)
	default:
		return fmt.Errorf("%w: %w; %w", ErrUnreachable, err, f)
	}
}

func (q *queue) reenterOrAcquire(ctx context.Context) (*Hold, error) {
	if h, ok := ctx.Value(q.key).(*hold); ok {
		return h.reenter()
	}
	return q.acquire(ctx)
}

// acquire queues a node and waits until it holds, ctx ends, or the session
// expires. Every failure deletes the node it created. Each step's requests
// end with ctx, and the caller waits for every step: none outlives it.
func (q *queue) acquire(ctx context.Context) (*Hold, error) {
	if err := q.s.waitReady(ctx); err != nil {
		return nil, err
	}
	w := &waiter{q: q, ctx: ctx, start: time.Now(), next: stepCreate, stepped: make(chan struct{}, 1)}
	if q.probe {
		w.next = stepProbe
	}
	return w.wait()
}

// wait is the acquire's loop: it runs the steps from w.next, each run on a
// goroutine of its own, and sleeps whenever they stop at stepSleep, until
// the acquire holds or fails.
func (w *waiter) wait() (*Hold, error) {
	w.run = w.steps // a func value: starting a step allocates nothing here
	for {
		go w.run()
		if <-w.stepped; w.hold != nil || w.err != nil {
			return w.hold, w.err
		}
		w.woke, w.next = w.sleep(), stepWoken
	}
}

// step is an action of an acquire: what it does next.
type step uint8

const (
	stepProbe    step = iota // a try: list once, and refuse if ours would wait
	stepCreate               // create our node
	stepList                 // list the queue and decide by the rule
	stepAdopt                // move to our own node ahead of ours, at w.p
	stepArm                  // watch the node ahead, at w.p
	stepWatchDir             // wait for any change of the directory
	stepSleep                // return to the caller, which sleeps until a wake
	stepWoken                // act on w.woke, what ended the sleep
	stepTakeOver             // the node ahead went: hold if we may, else list
	stepFinish               // end the acquire: register the hold, or fail with w.err
)

// wake is what ended a waiter's sleep.
type wake uint8

const (
	wakeFired     wake = iota // the watch on w.p fired, with w.ev
	wakeHandedOff             // its holder in this session handed the lock to us
	wakeChanged               // the session's state changed
	wakeCancelled             // ctx ended
)

// waiter is one acquisition between its steps. Its fields are used by one
// goroutine at a time, a step's or the caller's, ordered by stepped.
type waiter struct {
	q       *queue
	ctx     context.Context // the acquire's: every step's requests end with it
	start   time.Time
	id      uint64         // the acquire's number (Event.Acquire), from its create
	e       *entry         // our node, once created
	first   *pipelined     // the listing sent behind e's create, until used
	token   chan tokenRead // the read of an adopted node's token, while under way
	attempt int            // listings failed in a row, for the backoff
	next    step
	woke    wake // what ended the last sleep

	p       string          // the node ahead, watched; "" while none is
	jump    bool            // our node holds once p goes, by the jump rule (recipe.jumps)
	local   *handoff        // the in-process handoff registration on p
	ch      <-chan zk.Event // p's data watch, once armed
	changed <-chan struct{} // closed at the session's next state change
	ev      zk.Event        // what ch fired with

	hold       *Hold // the acquire is over: hold, or err
	err        error
	registered bool          // EventAcquired was reported (a confirm may still fail the acquire)
	run        func()        // steps
	stepped    chan struct{} // receives once per step, as it ends
}

// sleep waits for the wake-ups of an armed watch. The event is received
// into w, not into this frame, which is the caller's deepest.
func (w *waiter) sleep() wake {
	select {
	case <-w.local.done():
		return wakeHandedOff
	case w.ev = <-w.ch:
		return wakeFired
	case <-w.changed:
		return wakeChanged
	case <-w.ctx.Done():
		return wakeCancelled
	}
}

// steps runs the steps from w.next, on a goroutine of its own, until the
// caller must sleep or the acquire is over.
func (w *waiter) steps() {
	defer func() { w.stepped <- struct{}{} }()
	for {
		switch w.next {
		case stepProbe:
			w.next = w.probe()
		case stepCreate:
			w.next = w.create()
		case stepList:
			w.next = w.list()
		case stepAdopt:
			w.next = w.adopt()
		case stepArm:
			w.next = w.arm()
		case stepWatchDir:
			w.next = w.watchDir()
		case stepWoken:
			w.next = w.woken()
		case stepTakeOver:
			w.next = w.takeOver()
		case stepSleep:
			return
		default: // stepFinish
			w.finish()
			return
		}
	}
}

// fail ends the acquire with err.
func (w *waiter) fail(err error) step {
	w.err = err
	return stepFinish
}

// cancelled ends the acquire as ctx ended.
func (w *waiter) cancelled() step {
	w.unwatch()
	return w.fail(context.Cause(w.ctx))
}

// probe is a try's first step: one listing, and ErrLocked if ours would
// wait, so that a try on a taken lock writes nothing.
func (w *waiter) probe() step {
	if err := w.q.refuse(w.ctx); err != nil {
		return w.fail(err)
	}
	return stepCreate
}

func (w *waiter) create() step {
	w.started()
	e, first, err := w.q.create(w.ctx)
	if err != nil {
		return w.fail(err)
	}
	w.e, w.first = e, first
	if e.stat == nil {
		w.readToken()
	}
	return stepList
}

// readToken starts reading the token of a node found after a lost create
// reply (its entry has no stat), alongside the first listing, so it adds
// no round trip. finish waits for it.
func (w *waiter) readToken() {
	w.token = make(chan tokenRead, 1)
	ctx, node := w.ctx, w.e.node
	go func() {
		stat, err := w.q.s.stat(ctx, node)
		w.token <- tokenRead{stat, err}
	}()
}

// tokenRead is the outcome of readToken's read.
type tokenRead struct {
	stat *zk.Stat
	err  error
}

// list lists our directory and decides by the rule where our node stands.
func (w *waiter) list() step {
	w.unwatch()
	q, e := w.q, w.e
	switch state, sid, _ := q.s.snapshot(); {
	case state == StateClosed:
		return w.fail(ErrClosed)
	case state == StateExpired || sid != e.sid:
		return w.fail(ErrSessionExpired)
	}
	children, err := w.listing()
	switch {
	case err != nil && w.ctx.Err() != nil:
		return w.fail(context.Cause(w.ctx))
	case err != nil && permanent(err):
		return w.fail(refused(err, accessList, e.dir, "the lock directory"))
	case err != nil && !isConnErr(err) && !errors.Is(err, zk.ErrNoNode):
		return w.fail(fmt.Errorf("zklock: list %s: %w", e.dir, err))
	case err != nil && isConnErr(err):
		w.attempt = q.s.cfg.retry.wait(w.ctx, w.attempt)
		return stepList
	}
	cs := contenders(children, q.countAll)
	ours := indexOf(cs, e.name)
	if ours < 0 {
		if _, now, _ := q.s.snapshot(); now != e.sid {
			return w.fail(ErrSessionExpired)
		}
		return w.fail(fmt.Errorf("%w: %s", ErrNodeGone, e.node))
	}
	if keep, drop := sameCreate(cs, ours); keep != ours || drop != nil {
		for _, i := range drop {
			if i != ours { // ours goes once the one ahead is adopted
				q.s.cleaner.deleteNode(e.dir+"/"+cs[i].name, e.sid)
			}
		}
		if keep != ours {
			w.p = e.dir + "/" + cs[keep].name
			return stepAdopt
		}
	}
	holds, ahead := q.decide(cs, ours)
	switch {
	case holds:
		return stepFinish // ours holds
	case q.try:
		return w.fail(ErrLocked)
	case ahead == watchQueue:
		return stepWatchDir
	}
	w.watch(e.dir+"/"+cs[ahead].name, q.jumps(ahead, ours))
	return stepArm
}

// listing returns our directory's children: the first time, usually, the
// listing pipelined behind our create.
func (w *waiter) listing() ([]string, error) {
	if first := w.first; first != nil {
		w.first = nil // a waiting acquisition keeps nothing of its listing
		if children, ok := first.listingOf(w.e.name); ok {
			return children, nil
		}
	}
	if w.ctx.Err() != nil { // the pipelined listing ended with ctx: send no other
		return nil, context.Cause(w.ctx)
	}
	return w.q.s.list(w.ctx, w.e.dir)
}

// adopt moves the acquisition to w.p, the node of its own that the listing
// showed ahead of ours (see sameCreate), and deletes ours: the earlier node
// keeps our place, and its czxid, read here, is the hold's token. A node at
// w.p that another session owns is an expired older session's of ours: it
// is deleted and waited for, since a lagging server may list it until it
// has applied the expiry.
func (w *waiter) adopt() step {
	p := w.p
	stat, err := w.q.s.stat(w.ctx, p)
	switch {
	case err != nil && w.ctx.Err() != nil:
		return w.cancelled()
	case errors.Is(err, zk.ErrNoNode):
		return stepList
	case permanent(err):
		return w.fail(refused(err, accessRead, p, "our own earlier node"))
	case err != nil:
		w.attempt = w.q.s.cfg.retry.wait(w.ctx, w.attempt) // listing again reports or retries the error
		return stepList
	case stat.EphemeralOwner != w.e.sid:
		w.q.s.cleaner.deleteNode(p, stat.EphemeralOwner)
		w.watch(p, false)
		return stepArm
	}
	if w.token != nil { // the token of the node we leave, read after a lost create reply
		<-w.token
		w.token = nil
	}
	old := w.e
	w.e = &entry{dir: old.dir, name: path.Base(p), node: p, sid: old.sid, stat: stat}
	w.q.s.abandon(old.node, old.sid)
	return stepList
}

// watch starts watching the node at p; jump is the jump rule's answer for
// it (recipe.jumps). It registers for an in-process handoff of p where the
// queue hands over (recipe.jump).
func (w *waiter) watch(p string, jump bool) {
	w.p, w.jump = p, jump
	if w.q.jump {
		w.local = w.q.s.handoffs.await(p)
	}
}

// unwatch ends the watch of w.p, if any.
func (w *waiter) unwatch() {
	if w.local != nil {
		w.q.s.handoffs.drop(w.p, w.local)
	}
	w.p, w.jump, w.local, w.ch, w.changed = "", false, nil, nil, nil
}

// arm sets the data watch on w.p.
func (w *waiter) arm() step {
	_, sid, changed := w.q.s.snapshot()
	if sid != w.e.sid { // our session ended since the listing: a watch now would be the next one's
		return stepList
	}
	_, _, ch, err := w.q.s.readWatch(w.ctx, w.p)
	switch {
	case err != nil && w.ctx.Err() != nil:
		return w.cancelled()
	case errors.Is(err, zk.ErrNoNode):
		return stepTakeOver
	case permanent(err): // the listing may succeed: end here, or it would list and read again at once
		p := w.p
		w.unwatch()
		return w.fail(refused(err, accessRead, p, "the node ahead of ours"))
	case err != nil:
		w.attempt = w.q.s.cfg.retry.wait(w.ctx, w.attempt)
		return stepList // listing again reports or retries the error
	}
	w.attempt = 0
	w.ch, w.changed = ch, changed
	return stepSleep
}

// watchDir waits, on this goroutine, for the directory to change (see
// queue.watchDir).
func (w *waiter) watchDir() step {
	held, err := w.q.watchDir(w.ctx, w.e)
	switch {
	case err != nil && w.ctx.Err() != nil:
		return w.fail(context.Cause(w.ctx))
	case permanent(err):
		return w.fail(refused(err, accessList, w.e.dir, "the lock directory"))
	case err != nil:
		w.attempt = w.q.s.cfg.retry.wait(w.ctx, w.attempt)
		return stepList // listing again reports or retries the error
	case held:
		return stepFinish // ours holds
	}
	return stepList
}

// watchDir lists the directory with a children watch and reports whether
// our node holds by that listing; if not, it waits for the directory or the
// session to change, or for ctx. One waiter at a time waits this way on a
// directory (a semaphore's leases, under its internal lock), so the watch
// wakes no herd.
func (q *queue) watchDir(ctx context.Context, e *entry) (bool, error) {
	_, _, changed := q.s.snapshot()
	children, ch, err := q.s.listWatch(ctx, e.dir)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, context.Cause(ctx)
	case err != nil:
		return false, err // the caller ends on a permanent error, backs off on any other
	}
	cs := contenders(children, q.countAll)
	if ours := indexOf(cs, e.name); ours >= 0 {
		if keep, _ := sameCreate(cs, ours); keep != ours {
			return false, nil // listing again adopts it
		}
		if holds, _ := q.decide(cs, ours); holds {
			return true, nil
		}
	}
	for {
		select {
		case <-ch:
			return false, nil
		case <-changed:
			var state State
			state, _, changed = q.s.snapshot()
			if state != StateSuspended {
				return false, nil // go-zookeeper re-arms the watch on reconnect; list again anyway
			}
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
	}
}

// woken says what the wake-up w.woke means.
func (w *waiter) woken() step {
	switch w.woke {
	case wakeFired:
		switch w.ev.Type {
		case zk.EventNodeDeleted:
			return stepTakeOver
		case zk.EventNodeDataChanged, zk.EventNodeCreated:
			return stepArm
		}
		return stepList
	case wakeChanged:
		state, _, changed := w.q.s.snapshot()
		if state == StateSuspended {
			w.changed = changed // sleep on: the watch still stands
			return stepSleep
		}
		return stepList // go-zookeeper may have failed to re-arm the watch on reconnect
	case wakeCancelled:
		return w.cancelled()
	}
	return stepTakeOver // wakeHandedOff
}

// takeOver follows the going of the node ahead, w.p, or its handoff: ours
// holds now by the jump rule (recipe.jumps) or the in-process handoff
// (handoff.go), provided our session is still the one that created it;
// otherwise the queue is listed again.
func (w *waiter) takeOver() step {
	jump := w.jump || w.local.handedOff()
	w.unwatch()
	if state, sid, _ := w.q.s.snapshot(); jump && state != StateExpired && state != StateClosed && sid == w.e.sid {
		return stepFinish // ours holds
	}
	return stepList
}

// finish ends the acquire with w.err (nil: our node holds): it registers
// the hold, or deletes our node on any failure.
func (w *waiter) finish() {
	defer w.first.take() // a step normally has; never leave its goroutine behind
	err := w.err
	if w.token != nil {
		r := <-w.token
		w.token = nil
		switch {
		case err != nil:
		case errors.Is(r.err, zk.ErrNoNode) || r.err == nil && r.stat.EphemeralOwner != w.e.sid:
			err = fmt.Errorf("%w: %s", ErrNodeGone, w.e.node)
		case r.err != nil:
			err = fmt.Errorf("zklock: read %s: %w", w.e.node, r.err)
		default:
			w.e.stat = r.stat
		}
	}
	w.hold, w.err = w.held(err)
	if w.err != nil && w.id != 0 {
		w.failed()
	}
}

// held registers the hold of our node, unless the wait ended with werr; a
// node that is not held is deleted, unless it is gone or someone else's.
func (w *waiter) held(werr error) (_ *Hold, err error) {
	q, e := w.q, w.e
	if e == nil { // the create failed
		return nil, werr
	}
	defer func() {
		if err != nil && !errors.Is(err, ErrNodeGone) {
			q.s.abandon(e.node, e.sid)
		}
	}()
	if werr != nil {
		return nil, werr
	}
	h := &hold{
		s: q.s, key: q.key, path: q.path, node: e.node, token: e.stat.Czxid, czxid: e.stat.Czxid,
		sid: e.stat.EphemeralOwner, acquire: w.id, handoff: q.jump, internal: q.internal,
	}
	if q.token != 0 {
		h.token = q.token
	}
	// A confirmed hold's watch comes with its confirmation.
	hh, err := q.s.newHold(w.ctx, h, q.cfg.revocable, !q.confirm && !q.internal, w.start)
	if err != nil {
		return nil, err
	}
	w.registered = true
	if q.confirm {
		if err := q.s.confirm(w.ctx, h); err != nil {
			return nil, err
		}
	}
	return hh, nil
}

// started reports the acquire as begun, numbering it.
func (w *waiter) started() {
	w.id = acquires.Add(1)
	if !w.q.internal {
		w.q.s.observe(Event{Kind: EventAcquiring, Acquire: w.id, Path: w.q.path,
			Recipe: recipeOf(w.ctx, w.q.key), Context: w.ctx})
	}
}

// failed reports the end of the acquire with w.err. One whose hold was
// registered before it failed (a confirmation found the node gone) reports
// the hold lost instead, so that every EventAcquired is followed by
// EventReleased or EventLost.
func (w *waiter) failed() {
	if w.q.internal {
		return
	}
	ev := Event{Kind: EventAcquireFailed, Acquire: w.id, Path: w.q.path, Wait: time.Since(w.start), Err: w.err,
		Recipe: recipeOf(w.ctx, w.q.key), Context: w.ctx}
	if w.e != nil {
		ev.Node = w.e.node
	}
	if w.registered {
		ev.Kind, ev.Wait, ev.Err = EventLost, 0, fmt.Errorf("%w: %w", ErrLost, w.err)
	}
	w.q.s.observe(ev)
}
