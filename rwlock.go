package zklock

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// An RWLock is a distributed read-write lock: Curator's
// InterProcessReadWriteLock on the wire. Both halves queue in one directory,
// the lock path, as ephemeral sequential nodes <path>/_c_<uuid>-__READ__<seq>
// and <path>/_c_<uuid>-__WRIT__<seq>, under CONTAINER parents, so an RWLock
// and a Curator InterProcessReadWriteLock on the same path exclude each other
// as one lock. kazoo's write nodes (__lock__) count as writers and its read
// nodes (__rlock__) as readers; any other contender in the directory (a
// mutex's lock- node, for instance) counts as a writer.
//
// The queue is first come, first served across kinds:
//
//   - A writer holds when its node is the first in the queue; it watches its
//     immediate predecessor, whatever its kind.
//   - A reader holds when no writer is queued ahead of it, so readers share
//     with each other but a reader that arrives after a waiting writer waits
//     for that writer; it watches the nearest writer ahead of it.
//
// Both halves are reentrant with the Mutex's holder model: a Hold's Context
// re-enters the half it was acquired from, any other context queues as a
// separate participant. The reentrant count of each half is exact.
//
// Downgrade: a write holder may take the read half by passing the write
// Hold's Context (or a context derived from it) to ReadLock().Lock. As in
// Curator 5.5 (CURATOR-621), the read node is then created ephemeral but not
// sequential, named with the write node's sequence, so it keeps the write
// node's place in the queue: a writer queued behind cannot acquire until the
// downgraded read hold is released too, even after the write hold is. Such a
// read never waits. Its Token is the write hold's token, not its own node's
// czxid: the read hold continues the write hold's place in the queue, and
// every later holder's token (a writer queued behind, whose node is older
// than the read node) stays greater than it. Curator 5.4 instead queues the read node at the back,
// where a queued writer overtakes it; zklock does not.
//
// Upgrade is refused: WriteLock().Lock with a context that carries a read
// hold of this lock (and no live write hold) fails at once with ErrUpgrade,
// where Curator would deadlock. A context that does not carry the read hold
// is another participant: its write request waits for that read hold like
// any other, until its context ends.
//
// Every hold has its fencing token (the czxid of its node; readers holding
// at once have different tokens) and its loss signal, as a Mutex hold does.
//
// Because a downgrade can place a node ahead of waiters that are already
// queued, every waiter lists the directory again whenever the node it watches
// goes, instead of assuming that it now holds.
type RWLock struct {
	read, write RWHalf
}

// An RWHalf is the read or the write half of an RWLock. It is safe for
// concurrent use by many goroutines.
type RWHalf struct {
	rw   *RWLock
	q    queue
	kind Kind
}

// NewRWLock returns a read-write lock at path on s. It does no I/O: the path
// and its parents are created on the first acquire. Options apply to both
// halves. It returns an error for a nil session or an invalid path.
func NewRWLock(s *Session, path string, opts ...Option) (*RWLock, error) {
	// No jump on either half: see the RWLock doc on relisting.
	rq, err := newQueue(s, path, path, recipe{mark: markRead, decide: readDecide(""), read: true}, opts)
	if err != nil {
		return nil, err
	}
	wq, err := newQueue(s, path, path, recipe{mark: markWrite, decide: exclusive}, opts)
	if err != nil {
		return nil, err
	}
	rw := &RWLock{}
	rw.read = RWHalf{rw: rw, q: rq, kind: KindRead}
	rw.write = RWHalf{rw: rw, q: wq, kind: KindWrite}
	return rw, nil
}

// ReadLock returns the shared half.
func (rw *RWLock) ReadLock() *RWHalf { return &rw.read }

// WriteLock returns the exclusive half.
func (rw *RWLock) WriteLock() *RWHalf { return &rw.write }

// Path returns the lock path.
func (rw *RWLock) Path() string { return rw.read.q.path }

// Participants returns the contenders of both halves in queue order, with
// Holds set for every current holder (several readers, or one writer,
// possibly with the read node it downgraded to).
func (rw *RWLock) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, rw.read.q.s, rw.read.q.dir, rwView)
}

// Path returns the lock path.
func (h *RWHalf) Path() string { return h.q.path }

// Kind returns KindRead or KindWrite.
func (h *RWHalf) Kind() Kind { return h.kind }

// Lock acquires this half, waiting until it is granted, ctx is done, or the
// session expires while waiting. A context carrying a hold of this half
// re-enters it at once; on the read half, a context carrying a write hold of
// this lock downgrades (see RWLock); on the write half, a context carrying
// only a read hold of this lock fails at once with ErrUpgrade.
//
// On failure Lock returns a nil Hold and an error: ctx's cause if it ended,
// ErrUpgrade, ErrSessionExpired, ErrClosed, or a ZooKeeper error; the node
// it queued is deleted, as for Mutex.Lock.
func (h *RWHalf) Lock(ctx context.Context) (*Hold, error) { return h.lock(ctx, &h.q) }

// TryLock acquires this half only if it would be granted now, and never
// waits for another participant: otherwise it returns ErrLocked having
// written nothing. A reader is refused while a writer holds or waits. ctx
// bounds the ZooKeeper requests; re-entry, downgrade and upgrade behave as
// for Lock.
func (h *RWHalf) TryLock(ctx context.Context) (*Hold, error) { return h.lock(ctx, h.q.tryOnly()) }

// Participants returns the contenders of this half in queue order: the read
// half lists the read nodes (Curator's and kazoo's), the write half every
// other contender, as Curator's getParticipantNodes filters by lock name.
// Holds is judged against the whole queue.
func (h *RWHalf) Participants(ctx context.Context) ([]Participant, error) {
	ps, err := h.rw.Participants(ctx)
	if err != nil {
		return nil, err
	}
	kept := ps[:0]
	for _, p := range ps {
		c, _ := parseContender(p.Node)
		if c.read == h.q.read {
			kept = append(kept, p)
		}
	}
	return kept, nil
}

// lock takes this half through q, h.q or its try copy.
func (h *RWHalf) lock(ctx context.Context, q *queue) (*Hold, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	r, w := h.rw.read.q.key, h.rw.write.q.key
	if h.q.read {
		if _, ok := ctx.Value(r).(*hold); !ok {
			if wh := liveHold(ctx, w); wh != nil {
				return h.downgrade(ctx, wh)
			}
		}
		return obtain(ctx, q)
	}
	if liveHold(ctx, w) == nil && liveHold(ctx, r) != nil {
		return nil, fmt.Errorf("%w: %s", ErrUpgrade, h.q.path)
	}
	return obtain(ctx, q)
}

// liveHold returns the hold that ctx carries for key if it is neither
// released nor lost.
func liveHold(ctx context.Context, key any) *hold {
	h, ok := ctx.Value(key).(*hold)
	if !ok {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil
	}
	return h
}

// downgrade takes the read half for the holder of the write hold w, the
// Curator 5.5 way: the read node is ephemeral, not sequential, and named with
// w's sequence, so it keeps w's place at the head of the queue.
func (h *RWHalf) downgrade(ctx context.Context, w *hold) (*Hold, error) {
	name := path.Base(w.node)
	i := strings.LastIndex(name, markWrite)
	if i < 0 {
		return nil, fmt.Errorf("%w: write node %s has no %s marker", ErrInvalidArgument, w.node, markWrite)
	}
	q := h.q
	q.fixed = name[i+len(markWrite):]
	q.decide = readDecide(name)
	q.token = w.token
	// A downgrade never waits: the write node holds, so nothing but our own
	// read node can be queued at or ahead of its sequence. Taking the waiting
	// path (not the try path, whose probe would place the new node at the
	// back of the queue) keeps TryLock from refusing it.
	return obtain(ctx, &q)
}

func (h *RWHalf) isNil() bool { return h == nil }
