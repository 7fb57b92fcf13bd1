package zklock

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// queue is one recipe's view of a lock directory: where its nodes go, what
// they are called, and when the node at a given place in the queue holds.
// Every recipe acquires through queue.acquire.
type queue struct {
	s    *Session
	path string // the lock path the caller named
	dir  string // the directory that holds the nodes
	mark string // our node-name marker (lock-, __READ__, __WRIT__, lease-)
	read bool   // our nodes share with other readers
	cfg  lockConfig

	// fixed, when set, names our node exactly (after the protected prefix
	// and the marker) and makes it ephemeral but not sequential: Curator
	// 5.5's downgrade read node reuses its write node's sequence this way.
	fixed string

	// token, when nonzero, is the fencing token of the holds this queue
	// makes, instead of their node's czxid: a downgraded read hold keeps
	// its write hold's token, so every later holder's token stays greater.
	token int64

	// decide says whether the contender at index ours holds and, if not,
	// which contender to watch.
	decide func(cs []contender, ours int) (holds bool, watch int)

	probe *pipeProbe // tests only: what the pipelined listings did

	// jump: when the watched node was the head of the queue and ours came
	// right after it, its deletion makes ours the head, so the lock is taken
	// without listing again. Sound only where no node can later appear ahead
	// of ours; a read-write directory breaks that (a downgrade creates a read
	// node with the writer's sequence), so there every wake lists again.
	jump bool
}

// entry is our node in the queue.
type entry struct {
	dir, name string
	sid       int64      // the session that created it
	stat      *zk.Stat   // Czxid (the fencing token) and EphemeralOwner, once known
	first     *pipelined // the listing sent behind its create, if any
}

func (e *entry) node() string { return e.dir + "/" + e.name }

// exclusive is the decision of a mutex or a write lock: hold at the head of
// the queue, otherwise watch the immediate predecessor.
func exclusive(_ []contender, ours int) (bool, int) {
	if ours == 0 {
		return true, -1
	}
	return false, ours - 1
}

// acquire queues a node and waits until it holds, ctx ends, or the session
// expires. With try it never waits: it returns ErrLocked where it would.
// Every failure deletes the node it created (in the background if the
// connection is down).
func (q *queue) acquire(ctx context.Context, try bool) (_ *entry, err error) {
	if err := q.s.waitReady(ctx); err != nil {
		return nil, err
	}
	if try {
		if err := q.wouldWait(ctx); err != nil {
			return nil, err
		}
	}
	e, err := q.createListed(ctx, true)
	if err != nil {
		return nil, err
	}
	defer e.first.take() // wait normally has; never leave its goroutine behind
	defer func() {
		if err != nil {
			q.s.abandon(e.node(), e.sid)
		}
	}()
	if e.stat != nil { // the token came with the create's reply
		if err := q.wait(ctx, e, try); err != nil {
			return nil, err
		}
		return e, nil
	}
	// Otherwise (a node adopted after a lost reply) the token is read
	// alongside the first listing, so it adds no round trip.
	type statResult struct {
		ok   bool
		stat *zk.Stat
		err  error
	}
	statc := make(chan statResult, 1)
	go func() {
		ok, stat, err := call2(ctx, func() (bool, *zk.Stat, error) { return q.s.conn.Exists(e.node()) })
		statc <- statResult{ok, stat, err}
	}()
	werr := q.wait(ctx, e, try)
	r := <-statc
	switch {
	case werr != nil:
		return nil, werr
	case r.err != nil:
		return nil, fmt.Errorf("zklock: read %s: %w", e.node(), r.err)
	case !r.ok || r.stat.EphemeralOwner != e.sid:
		return nil, fmt.Errorf("%w: %s", ErrNodeGone, e.node())
	}
	e.stat = r.stat
	return e, nil
}

// wouldWait lists the directory once and returns ErrLocked if a node of ours
// would have to wait, so a TryLock on a taken lock writes nothing.
func (q *queue) wouldWait(ctx context.Context) error {
	children, _, err := call2(ctx, func() ([]string, *zk.Stat, error) { return q.s.conn.Children(q.dir) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("zklock: list %s: %w", q.dir, err)
	}
	cs := sortContenders(children)
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

// wait lists the queue until our node holds, watching one node at a time.
func (q *queue) wait(ctx context.Context, e *entry, try bool) error {
	for attempt := 0; ; {
		state, sid, _ := q.s.snapshot()
		switch {
		case state == StateClosed:
			return ErrClosed
		case state == StateExpired || sid != e.sid:
			return ErrSessionExpired
		}
		children, err := q.listing(ctx, e)
		if err != nil && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			if err := q.listFailed(ctx, e.dir, err, &attempt); err != nil {
				return err
			}
			continue
		}
		cs := sortContenders(children)
		ours := indexOf(cs, e.name)
		if ours < 0 {
			if _, now, _ := q.s.snapshot(); now != e.sid {
				return ErrSessionExpired
			}
			return fmt.Errorf("%w: %s", ErrNodeGone, e.node())
		}
		holds, w := q.decide(cs, ours)
		if holds {
			return nil
		}
		if try {
			return ErrLocked
		}
		jump := q.jump && (w == 0 && ours == 1 || negTrustWatch) // negTrustWatch: test-only (negative_off.go)
		held, err := q.watch(ctx, e, e.dir+"/"+cs[w].name, jump)
		if err != nil || held {
			return err
		}
	}
}

// watch waits for the node at p to go. It returns true when that makes our
// node the holder by the jump rule, false when the queue must be listed
// again (the node went, a watch was lost, the session changed).
func (q *queue) watch(ctx context.Context, e *entry, p string, jump bool) (bool, error) {
	var local *handoff
	if q.jump {
		local = q.s.awaitHandoff(p)
		defer q.s.dropHandoff(p)
	}
	gone := func() bool { return q.jumped(e, jump || q.s.handedOff(ctx, local)) }
	for {
		_, _, changed := q.s.snapshot()
		ch, err := call(ctx, func() (<-chan zk.Event, error) {
			_, _, ch, err := q.s.conn.GetW(p)
			return ch, err
		}, nil)
		switch {
		case err != nil && ctx.Err() != nil:
			return false, context.Cause(ctx)
		case errors.Is(err, zk.ErrNoNode):
			return gone(), nil
		case err != nil:
			return false, nil // listing again reports or retries the error
		}
	wait:
		for {
			select {
			case ev := <-ch:
				switch ev.Type {
				case zk.EventNodeDeleted:
					return gone(), nil
				case zk.EventNodeDataChanged, zk.EventNodeCreated:
					break wait // re-arm the watch on the same node
				default:
					return false, nil
				}
			case <-changed:
				var state State
				state, _, changed = q.s.snapshot()
				if state != StateSuspended {
					// Reconnected (go-zookeeper may have failed to re-arm
					// our watch), expired or closed: list again.
					return false, nil
				}
			case <-ctx.Done():
				return false, context.Cause(ctx)
			}
		}
	}
}

// handoff is what a waiter learns from its own process about the node it
// waits on. ZooKeeper tells a waiter only that its predecessor's node went,
// not whether the holder released it or a waiter gave up; within a process
// the engine knows. When a hold of this session releases the node a local
// waiter watches, the waiter is the new head: it takes the lock without a
// listing, whatever it listed before.
type handoff struct {
	users    int           // waiters watching the node
	started  bool          // its holder began deleting it
	released chan struct{} // closed once that delete returned
	ok       bool          // and succeeded
}

// awaitHandoff registers a waiter's interest in the node at p.
func (s *Session) awaitHandoff(p string) *handoff {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handoffs == nil {
		s.handoffs = make(map[string]*handoff)
	}
	h := s.handoffs[p]
	if h == nil {
		h = &handoff{released: make(chan struct{})}
		s.handoffs[p] = h
	}
	h.users++
	return h
}

func (s *Session) dropHandoff(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.handoffs[p]; h != nil {
		if h.users--; h.users == 0 {
			delete(s.handoffs, p)
		}
	}
}

// releaseHead deletes node, the head of an exclusive queue, for its holder
// and tells a local waiter behind it. The waiter's deletion notification
// comes before the delete's reply on the shared connection, so it is marked
// started before the request is sent.
func (s *Session) releaseHead(node string) error {
	s.mu.Lock()
	h := s.handoffs[node]
	if h != nil {
		h.started = true
	}
	s.mu.Unlock()
	err := s.conn.Delete(node, -1)
	if h != nil {
		s.mu.Lock()
		h.ok = err == nil
		s.mu.Unlock()
		close(h.released)
	}
	return err
}

// handedOff reports, once the node a waiter watched went, whether its holder
// in this process deleted it successfully.
func (s *Session) handedOff(ctx context.Context, h *handoff) bool {
	if h == nil {
		return false
	}
	s.mu.Lock()
	started := h.started
	s.mu.Unlock()
	if !started {
		return false
	}
	select {
	case <-h.released:
	case <-ctx.Done():
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return h.ok
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
