package zklock

import (
	"context"
)

// A Mutex is a reentrant, distributed mutual exclusion lock: Curator's
// InterProcessMutex on the wire, so it excludes a Curator InterProcessMutex
// or LeaderSelector, a go-zookeeper zk.Lock and a kazoo Lock made with
// extra_lock_patterns=["-lock-"] on the same path (a default kazoo Lock
// makes it wait but ignores it). Ownership is carried by contexts, not
// goroutines: a Hold's Context re-enters the lock, and any other context
// queues behind the holder, even in the same goroutine. A Mutex is safe for
// concurrent use. See docs/protocol.md#mutex.
type Mutex struct {
	q queue
}

// NewMutex returns a reentrant mutex at path on s. It does no I/O: the path
// and its parents are created on the first acquire. It returns an error for
// a nil session or an invalid path (empty, relative, or ending in "/").
func NewMutex(s *Session, path string, opts ...Option) (*Mutex, error) {
	q, err := newQueue(s, path, path, recipe{mark: markLock, decide: exclusive, jump: true}, opts)
	if err != nil {
		return nil, err
	}
	return &Mutex{q: q}, nil
}

// Path returns the lock path.
func (m *Mutex) Path() string { return m.q.path }

// Lock acquires the mutex, waiting until it is free, ctx is done, or the
// session expires while waiting; a ctx carrying a hold of this mutex (a
// Hold's Context, or one derived from it) re-enters at once. Connection
// problems are retried with the session's backoff. On failure Lock returns
// a nil Hold and ctx's cause, ErrSessionExpired, ErrClosed or a ZooKeeper
// error, and the node it queued is deleted, in the background if the
// connection is down.
func (m *Mutex) Lock(ctx context.Context) (*Hold, error) { return obtain(ctx, &m.q) }

// TryLock acquires the mutex only if no one holds it or queues for it now,
// and never waits for another participant: if one is ahead it returns
// ErrLocked having written nothing. ctx bounds the ZooKeeper requests. If ctx
// carries a hold of this mutex, TryLock re-enters.
func (m *Mutex) TryLock(ctx context.Context) (*Hold, error) { return obtain(ctx, m.q.tryOnly()) }

// Participants returns the contenders of the lock in queue order, the holder
// first.
func (m *Mutex) Participants(ctx context.Context) ([]Participant, error) {
	return m.q.participants(ctx)
}

// Kind returns KindLock, so a Mutex is a Locker.
func (m *Mutex) Kind() Kind { return KindLock }

func (m *Mutex) isNil() bool { return m == nil }
