package zklock

// The engine. Every recipe is a queue in a lock directory plus a rule that
// says when a node holds; the engine does the rest, the same way for all:
// create a protected node (create.go) with the first listing pipelined
// behind it (pipeline.go), decide by the rule, wait for the one node (or,
// for a semaphore's leases, the one directory) the rule names, and register
// the hold (hold.go). Every failure deletes the node it created (delete.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// queue is one recipe's view of a lock directory: where its nodes go, what
// they are called, and when the node at a given place in the queue holds.
type queue struct {
	s    *Session
	path string // the lock path the caller named
	dir  string // the znode directory that holds the nodes (namespace included)
	mark string // our node-name marker (lock-, __READ__, __WRIT__, lease-, latch-)
	read bool   // our nodes share with other readers
	cfg  lockConfig

	// decide is the recipe's rule (rules.go).
	decide rule

	// try: never wait for another participant; ErrLocked where a wait
	// would start. Set on a copy of the queue (see tryOnly).
	try bool

	// jump: when the watched node was the head of the queue and ours came
	// right after it, its deletion makes ours the head, so the lock is taken
	// without listing again, and a release in this session hands the lock
	// to the local waiter behind it (handoff.go). Sound only where no node
	// can later appear ahead of ours; a read-write directory breaks that (a
	// downgrade creates a read node with the writer's sequence).
	jump bool

	// countAll: every child of the directory counts, contender or not (as
	// a Curator semaphore counts its leases).
	countAll bool

	// confirm: before a hold is returned, its node is read again (with the
	// watch every hold's node carries), so a leader's term never starts on
	// a node that is gone or another session's (Curator's CURATOR-696).
	confirm bool

	// internal: the queue serves the library itself (a semaphore's internal
	// lock): its holds send no watch of their own and no events.
	internal bool

	// fixed, when set, names our node exactly (after the protected prefix
	// and the marker) and makes it ephemeral but not sequential: Curator
	// 5.5's downgrade read node reuses its write node's sequence this way.
	fixed string

	// token, when nonzero, is the fencing token of the holds this queue
	// makes, instead of their node's czxid: a downgraded read hold keeps
	// its write hold's token, so every later holder's token stays greater.
	token int64
}

// entry is our node in the queue.
type entry struct {
	dir, name string
	sid       int64      // the session that created it
	stat      *zk.Stat   // Czxid (the fencing token) and EphemeralOwner, once known
	first     *pipelined // the listing sent behind its create, if any
}

func (e *entry) node() string { return e.dir + "/" + e.name }

// newQueue checks a recipe's arguments and returns its queue in dir, which
// is lockPath or a directory under it.
func newQueue(s *Session, lockPath, dir, mark string, decide rule, opts []Option) (queue, error) {
	if s == nil {
		return queue{}, fmt.Errorf("%w: nil session", ErrInvalidArgument)
	}
	if err := ValidatePath(lockPath); err != nil {
		return queue{}, err
	}
	cfg := newLockConfig(opts)
	dir = s.FullPath(dir)
	if err := checkRequestSize(dir, cfg.data, cfg.acl); err != nil {
		return queue{}, err
	}
	return queue{s: s, path: lockPath, dir: dir, mark: mark, decide: decide, cfg: cfg}, nil
}

// tryOnly returns a copy of q that never waits.
func (q queue) tryOnly() *queue {
	q.try = true
	return &q
}

// lock is the acquire of every reentrant recipe: re-enter the hold ctx
// carries for this queue, or acquire a new one.
func (q *queue) lock(ctx context.Context) (*Hold, error) {
	if err := q.s.begin(ctx); err != nil {
		return nil, err
	}
	if q.cfg.failOpen > 0 {
		return q.lockFailOpen(ctx)
	}
	h, err := q.reenterOrAcquire(ctx)
	return h, q.unreachable(err)
}

// reenterOrAcquire re-enters the hold ctx carries for this queue, or
// acquires a new one.
func (q *queue) reenterOrAcquire(ctx context.Context) (*Hold, error) {
	if h, err := q.reenterOrProbe(ctx); h != nil || err != nil {
		return h, err
	}
	return q.acquire(ctx)
}

// reenterOrProbe returns the hold ctx carries for this queue, or the error
// that ends the acquire before it writes anything (a try's ErrLocked), or
// (nil, nil) to go on. It returns before acquire starts, so that a waiting
// goroutine's stack holds as few frames as possible: at most 2 KiB in use
// lets the runtime halve an 8 KiB stack.
func (q *queue) reenterOrProbe(ctx context.Context) (*Hold, error) {
	if h, err := reenter(ctx, q.key()); h != nil || err != nil {
		return h, err
	}
	return nil, q.probe(ctx)
}

// probe is a try's first step: it lists the directory once and returns
// ErrLocked if a node of ours would have to wait, so that a try on a taken
// lock writes nothing. It does nothing for a queue that may wait.
func (q *queue) probe(ctx context.Context) error {
	if !q.try {
		return nil
	}
	if err := q.s.waitReady(ctx); err != nil {
		return err
	}
	return q.wouldWait(ctx)
}

// key identifies this queue's holds within the session, for re-entry.
func (q *queue) key() holdKey { return holdKey{q.s, q.dir, q.mark} }

// acquire queues a node and waits until it holds, ctx ends, or the session
// expires, then returns the registered hold. Every failure deletes the node
// it created (in the background if the connection is down).
func (q *queue) acquire(ctx context.Context) (_ *Hold, err error) {
	start := time.Now()
	if err := q.s.waitReady(ctx); err != nil {
		return nil, err
	}
	e, err := q.create(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { e.first.take() }() // wait normally has; never leave its goroutine behind
	defer func() {
		// A node that is gone, or someone else's, is not ours to delete.
		if err != nil && !errors.Is(err, ErrNodeGone) {
			q.s.abandon(e.node(), e.sid)
		}
	}()
	if e.stat != nil {
		err = q.wait(ctx, e)
	} else {
		err = q.waitWithToken(ctx, e)
	}
	if err != nil {
		return nil, err
	}
	h, err := q.s.newHold(ctx, q, e, start)
	if err != nil {
		return nil, err
	}
	if q.confirm {
		if err := q.s.confirm(ctx, h.h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// waitWithToken is wait for an entry without its token (e.stat is nil): a
// node adopted after a lost create reply. The token is read alongside the
// first listing, so it adds no round trip.
func (q *queue) waitWithToken(ctx context.Context, e *entry) error {
	type statResult struct {
		stat *zk.Stat
		err  error
	}
	statc := make(chan statResult, 1)
	go func() {
		stat, err := q.s.stat(ctx, e.node())
		statc <- statResult{stat, err}
	}()
	werr := q.wait(ctx, e)
	r := <-statc
	switch {
	case werr != nil:
		return werr
	case errors.Is(r.err, zk.ErrNoNode) || r.err == nil && r.stat.EphemeralOwner != e.sid:
		return fmt.Errorf("%w: %s", ErrNodeGone, e.node())
	case r.err != nil:
		return fmt.Errorf("zklock: read %s: %w", e.node(), r.err)
	}
	e.stat = r.stat
	return nil
}

// contenders orders a listing for the rule; with countAll, children that
// are not contenders come first, as holders.
func (q *queue) contenders(children []string) []contender {
	cs := sortContenders(children)
	if q.countAll && len(cs) < len(children) {
		foreign := make([]contender, 0, len(children))
		for _, name := range children {
			if _, ok := parseContender(name); !ok {
				foreign = append(foreign, contender{name: name, kind: KindForeign})
			}
		}
		cs = append(foreign, cs...)
	}
	return cs
}

// wouldWait lists the directory once and returns ErrLocked if a node of ours
// would have to wait.
func (q *queue) wouldWait(ctx context.Context) error {
	children, err := q.s.list(ctx, q.dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("zklock: list %s: %w", q.dir, err)
	}
	cs := q.contenders(children)
	last := int32(0)
	if len(cs) > 0 {
		last = cs[len(cs)-1].seq
	}
	cs = append(cs, contender{seq: last + 1, read: q.read})
	if holds, _ := q.decide(cs, len(cs)-1); !holds {
		return ErrLocked
	}
	return nil
}

// wait lists the queue until our node holds, waiting on one node (or the
// directory) at a time.
func (q *queue) wait(ctx context.Context, e *entry) error {
	for attempt := 0; ; {
		m, p, err := q.next(ctx, e, &attempt)
		var held bool
		switch m {
		case moveHold:
			return err
		case moveRelist:
			continue
		case moveWatchQueue:
			held, err = q.watchQueue(ctx, e)
		default:
			held, err = q.watch(ctx, e, p, m == moveJump)
		}
		if err != nil || held {
			return err
		}
	}
}

// move is what wait does after a listing.
type move uint8

const (
	moveHold       move = iota // return: our node holds, or the error ends the wait
	moveRelist                 // list again
	moveWatch                  // watch the node ahead
	moveJump                   // watch the node ahead, and hold once it goes
	moveWatchQueue             // watch the directory
)

// next lists e's directory and decides wait's next move; p is the node to
// watch. It is apart from wait so that a waiting goroutine's stack holds
// neither the listing nor its temporaries: at most 2 KiB in use lets the
// runtime halve an 8 KiB stack.
func (q *queue) next(ctx context.Context, e *entry, attempt *int) (_ move, p string, _ error) {
	state, sid, _ := q.s.snapshot()
	switch {
	case state == StateClosed:
		return moveHold, "", ErrClosed
	case state == StateExpired || sid != e.sid:
		return moveHold, "", ErrSessionExpired
	}
	children, err := q.listing(ctx, e)
	if err != nil && ctx.Err() != nil {
		return moveHold, "", context.Cause(ctx)
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		if err := q.listFailed(ctx, e.dir, err, attempt); err != nil {
			return moveHold, "", err
		}
		return moveRelist, "", nil
	}
	cs := q.contenders(children)
	ours := indexOf(cs, e.name)
	if ours < 0 {
		if _, now, _ := q.s.snapshot(); now != e.sid {
			return moveHold, "", ErrSessionExpired
		}
		return moveHold, "", fmt.Errorf("%w: %s", ErrNodeGone, e.node())
	}
	holds, w := q.decide(cs, ours)
	switch {
	case holds:
		return moveHold, "", nil
	case q.try:
		return moveHold, "", ErrLocked
	case w == watchQueue:
		return moveWatchQueue, "", nil
	case q.jump && (w == 0 && ours == 1 || negTrustWatch): // negTrustWatch: test-only (negative_off.go)
		return moveJump, e.dir + "/" + cs[w].name, nil
	}
	return moveWatch, e.dir + "/" + cs[w].name, nil
}

// watch waits for the node at p to go. It returns true when that makes our
// node the holder (the jump rule, or a handoff within the session), false
// when the queue must be listed again (the node went, a watch was lost, the
// session changed).
func (q *queue) watch(ctx context.Context, e *entry, p string, jump bool) (bool, error) {
	var local *handoff
	if q.jump {
		local = q.s.awaitHandoff(p)
		defer q.s.dropHandoff(p)
	}
	for {
		ch, changed, w := q.arm(ctx, p)
		if w == armed {
			w = q.await(ctx, local, ch, changed)
		}
		switch w {
		case wokeRearm:
			continue
		case wokeHandedOff:
			return q.jumped(e, true), nil
		case wokeGone:
			return q.jumped(e, jump || local.handedOff()), nil
		case wokeDone:
			return false, context.Cause(ctx)
		default:
			return false, nil
		}
	}
}

// woke is what ended a wait on a watched node.
type woke uint8

const (
	armed         woke = iota // the watch is set
	wokeGone                  // the node went
	wokeHandedOff             // its holder, of our session, handed off to us
	wokeRearm                 // it changed: watch it again
	wokeRelist                // a watch was lost or the session changed: list again
	wokeDone                  // ctx ended
)

// arm sets the data watch on p. It is apart from watch, as await is, so
// that a waiting goroutine's stack holds none of its temporaries: at most
// 2 KiB in use lets the runtime halve an 8 KiB stack.
func (q *queue) arm(ctx context.Context, p string) (<-chan zk.Event, <-chan struct{}, woke) {
	_, _, changed := q.s.snapshot()
	_, _, ch, err := q.s.readWatch(ctx, p)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, nil, wokeDone
	case errors.Is(err, zk.ErrNoNode):
		return nil, nil, wokeGone
	case err != nil:
		return nil, nil, wokeRelist // listing again reports or retries the error
	}
	return ch, changed, armed
}

// await waits on the watch arm set, the session's state and ctx.
func (q *queue) await(ctx context.Context, local *handoff, ch <-chan zk.Event, changed <-chan struct{}) woke {
	for {
		select {
		case <-local.done():
			return wokeHandedOff
		case ev := <-ch:
			switch ev.Type {
			case zk.EventNodeDeleted:
				return wokeGone
			case zk.EventNodeDataChanged, zk.EventNodeCreated:
				return wokeRearm
			default:
				return wokeRelist
			}
		case <-changed:
			var state State
			state, _, changed = q.s.snapshot()
			if state != StateSuspended {
				// Reconnected (go-zookeeper may have failed to re-arm
				// our watch), expired or closed: list again.
				return wokeRelist
			}
		case <-ctx.Done():
			return wokeDone
		}
	}
}

// watchQueue lists the directory with a children watch and reports whether
// our node holds by that listing; if not, it waits for the directory to
// change, for the session to change, or for ctx. One waiter at a time waits
// this way on a directory (a semaphore's leases are waited for under its
// internal lock), so the watch wakes no herd.
func (q *queue) watchQueue(ctx context.Context, e *entry) (bool, error) {
	_, _, changed := q.s.snapshot()
	children, ch, err := q.s.listWatch(ctx, e.dir)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, context.Cause(ctx)
	case err != nil:
		return false, nil // listing again reports or retries the error
	}
	cs := q.contenders(children)
	if ours := indexOf(cs, e.name); ours >= 0 {
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

// jumped applies the jump rule once the watched node went, provided our
// session is still the one that created our node.
func (q *queue) jumped(e *entry, jump bool) bool {
	if !jump {
		return false
	}
	state, sid, _ := q.s.snapshot()
	return state != StateExpired && state != StateClosed && sid == e.sid
}
