package zklock

import "context"

// A SemaphoreMutex is a non-reentrant distributed mutex: a Semaphore with
// one lease, Curator's InterProcessSemaphoreMutex on the wire. It excludes
// Curator InterProcessSemaphoreMutex and one-lease InterProcessSemaphoreV2
// clients on the same path, but not a Mutex or an InterProcessMutex (another
// protocol). A Lock passing the Context of a Hold of it still waits, forever
// unless ctx ends or the hold is released: use a Mutex for reentrancy. Its
// Hold may be released from any goroutine. A SemaphoreMutex is safe for
// concurrent use. See docs/protocol.md#semaphore.
type SemaphoreMutex struct {
	sem *Semaphore
}

// NewSemaphoreMutex returns a semaphore mutex at path on s, with the
// Semaphore's options. It does no I/O and returns an error for a nil session
// or an invalid path.
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
// session expires while waiting; it never re-enters. On failure it returns a
// nil Hold and an error, as Semaphore.Acquire does, leaving no node behind.
func (m *SemaphoreMutex) Lock(ctx context.Context) (*Hold, error) { return m.sem.Acquire(ctx) }

// TryLock acquires the mutex only if it is free now; otherwise it returns
// ErrLocked having left nothing behind. ctx bounds the ZooKeeper requests.
func (m *SemaphoreMutex) TryLock(ctx context.Context) (*Hold, error) { return m.sem.TryAcquire(ctx) }

// Kind returns KindLease, so a SemaphoreMutex is a Locker and can be a
// member of a MultiLock (as in Curator's InterProcessMultiLock); a
// MultiHold's Context does not re-enter it either.
func (m *SemaphoreMutex) Kind() Kind { return KindLease }

func (m *SemaphoreMutex) isNil() bool { return m == nil }

var _ Locker = (*SemaphoreMutex)(nil)
