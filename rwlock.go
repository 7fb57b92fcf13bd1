package zklock

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// An RWLock is a distributed read-write lock: Curator's
// InterProcessReadWriteLock on the wire, so it and a Curator one on the same
// path are one lock (kazoo's read and write nodes count too). Readers share
// with each other and exclude writers; the queue is first come, first served
// across kinds, so a reader that arrives after a waiting writer waits for
// it. Both halves are reentrant, as a Mutex is: a Hold's Context re-enters
// the half it was acquired from. A write holder downgrades by passing its
// Hold's Context to ReadLock().Lock: the read hold keeps the write hold's
// place and token, so a writer queued behind waits for both. An upgrade is
// refused with ErrUpgrade, where Curator would deadlock. Every hold has a
// fencing token and a loss signal, as a Mutex hold does.
// See docs/protocol.md#read-write-lock.
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
	// Neither half has the jump rule (recipe.jumps): a downgrade can queue a
	// node ahead of waiters (docs/protocol.md#read-write-lock).
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

// Participants returns the contenders of both halves in queue order, Holds
// set for every holder (readers, or a writer and its downgrade read node).
func (rw *RWLock) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, rw.read.q.s, rw.read.q.dir, rwView)
}

// Path returns the lock path.
func (h *RWHalf) Path() string { return h.q.path }

// Kind returns KindRead or KindWrite.
func (h *RWHalf) Kind() Kind { return h.kind }

// Lock acquires this half, waiting until it is granted, ctx is done, or
// the session expires while waiting. A context carrying a hold of this half
// re-enters it; on the read half, one carrying a write hold of this lock
// downgrades; on the write half, one carrying only a read hold of this lock
// fails at once with ErrUpgrade. On failure Lock returns a nil Hold and ctx's
// cause, ErrUpgrade, ErrSessionExpired, ErrClosed or a ZooKeeper error, and
// the node it queued is deleted, as for Mutex.Lock.
func (h *RWHalf) Lock(ctx context.Context) (*Hold, error) { return h.lock(ctx, &h.q) }

// TryLock acquires this half only if it would be granted now: otherwise it
// returns ErrLocked having written nothing (a reader is refused while a
// writer holds or waits). ctx bounds the ZooKeeper requests; re-entry,
// downgrade and upgrade behave as for Lock.
func (h *RWHalf) TryLock(ctx context.Context) (*Hold, error) { return h.lock(ctx, h.q.tryOnly()) }

// Participants returns the contenders of this half in queue order (the read
// nodes for the read half, every other contender for the write half), with
// Holds judged against the whole queue.
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

// downgrade takes the read half for the holder of the write hold w, its
// read node named with w's sequence (see docs/protocol.md#read-write-lock).
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
	// A downgrade never waits; it takes the waiting path, as the try path's
	// probe would put the node at the back and TryLock would refuse it.
	return obtain(ctx, &q)
}

func (h *RWHalf) isNil() bool { return h == nil }
