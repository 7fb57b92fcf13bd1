package zklock

import (
	"context"
)

// A Mutex is a reentrant, distributed mutual exclusion lock: Curator's
// InterProcessMutex on the wire. Its nodes are <path>/_c_<uuid>-lock-<seq>,
// ephemeral and sequential, under CONTAINER parents, so a Mutex excludes a
// Curator InterProcessMutex or LeaderSelector on the same path, and a kazoo
// Lock configured with extra_lock_patterns=["-lock-"]. kazoo's own nodes
// count as contenders too.
//
// Ownership is carried by contexts, not goroutines: Lock returns a Hold whose
// Context re-enters the same lock when passed to Lock again (the count is
// exact, and the node is deleted at the last release). Any other context
// queues behind the holder, even in the same process and goroutine. A Mutex
// value is safe for concurrent use by many goroutines; each acquisition that
// does not re-enter waits in the queue as its own participant.
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
// session expires while waiting. If ctx carries a hold of this mutex (it is,
// or derives from, a Hold's Context), Lock re-enters at once.
//
// On failure Lock returns a nil Hold and an error: ctx's cause if it ended
// (context.Canceled or DeadlineExceeded), ErrSessionExpired, ErrClosed, or
// a ZooKeeper error; the node it queued is deleted before or, if the
// connection is down, after Lock returns. Connection problems while queueing
// are retried with the session's backoff until ctx ends.
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
