package zklock

import "context"

// A SemaphoreMutex is a non-reentrant distributed mutex: Curator's
// InterProcessSemaphoreMutex on the wire, that is a Semaphore with one lease
// (see Semaphore for the layout). It excludes Curator
// InterProcessSemaphoreMutex clients and InterProcessSemaphoreV2 clients with
// one lease on the same path. It does not exclude a Mutex or a Curator
// InterProcessMutex on the same path: that is another protocol.
//
// Not reentrant: a Lock by a goroutine that already holds the mutex, even
// one passing the Hold's Context, waits like anyone else, so it waits
// forever unless ctx ends or the hold is released from another goroutine.
// Use a Mutex for reentrancy. Unlike a Mutex, a SemaphoreMutex's Hold may be
// released from any goroutine (as Curator's may be released from any thread).
//
// A SemaphoreMutex is safe for concurrent use by many goroutines.
type SemaphoreMutex struct {
	sem *Semaphore
}

// NewSemaphoreMutex returns a semaphore mutex at path on s. It does no I/O.
// It returns an error for a nil session or an invalid path. The options are
// the Semaphore's.
func NewSemaphoreMutex(s *Session, path string, opts ...Option) (*SemaphoreMutex, error) {
	sem, err := NewSemaphore(s, path, 1, opts...)
	if err != nil {
		return nil, err
	}
	return &SemaphoreMutex{sem: sem}, nil
}

// Path returns the lock path.
func (m *SemaphoreMutex) Path() string { return m.sem.path }

// Participants returns the lease nodes (the holder first, then at most one
// participant waiting for the lease); see Semaphore.Participants.
func (m *SemaphoreMutex) Participants(ctx context.Context) ([]Participant, error) {
	return m.sem.Participants(ctx)
}

// Lock acquires the mutex, waiting until it is free, ctx is done, or the
// session expires while waiting. It never re-enters (see SemaphoreMutex).
// The Hold's Token is the czxid of its lease node.
//
// On failure Lock returns a nil Hold and an error: ctx's cause if it ended,
// ErrSessionExpired, ErrClosed, or a ZooKeeper error; no node is left
// behind (see Semaphore.Acquire).
func (m *SemaphoreMutex) Lock(ctx context.Context) (*Hold, error) { return m.sem.Acquire(ctx) }

// TryLock acquires the mutex only if it is free now; otherwise it returns
// ErrLocked having left nothing behind. ctx bounds the ZooKeeper requests.
func (m *SemaphoreMutex) TryLock(ctx context.Context) (*Hold, error) { return m.sem.TryAcquire(ctx) }

// Kind returns KindLease, so a SemaphoreMutex is a Locker and can be a
// member of a MultiLock (as Curator's InterProcessMultiLock accepts an
// InterProcessSemaphoreMutex). It is not reentrant there either: a
// MultiHold's Context does not re-enter it.
func (m *SemaphoreMutex) Kind() Kind { return KindLease }

func (m *SemaphoreMutex) isNil() bool { return m == nil }

var _ Locker = (*SemaphoreMutex)(nil)
