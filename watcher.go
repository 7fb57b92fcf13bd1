package zklock

// The engine. Every recipe is a queue in a lock directory plus a rule that
// says when a node holds; the engine does the rest, the same way for all:
// create a protected node (create.go) with the first listing pipelined
// behind it (pipeline.go), decide by the rule, wait for the one node (or,
// for a semaphore's leases, the one directory) the rule names (wait.go),
// and register the hold (hold.go). Every failure deletes the node it
// created (delete.go).

import (
	"context"
	"errors"
	"fmt"

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

	// key identifies this queue's holds within the session, for re-entry
	// (a holdKey, set by rekey). It is boxed once: boxing it for each
	// acquire's ctx.Value would allocate on the caller's stack-tight path
	// (wait.go).
	key any
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
	q := queue{s: s, path: lockPath, dir: dir, mark: mark, decide: decide, cfg: cfg}
	q.rekey()
	return q, nil
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
// goroutine's stack holds as few frames as possible (see wait.go).
func (q *queue) reenterOrProbe(ctx context.Context) (*Hold, error) {
	if h, err := reenter(ctx, q.key); h != nil || err != nil {
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
	err := q.wouldWait(ctx)
	if err != nil {
		q.refused(err)
	}
	return err
}

// rekey sets key; whoever changes s, dir or mark calls it.
func (q *queue) rekey() { q.key = holdKey{q.s, q.dir, q.mark} }

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
