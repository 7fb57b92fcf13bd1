package zklock

import (
	"context"
	"errors"
	"fmt"
)

// A Semaphore is a counting semaphore with a fixed number of leases:
// Curator's InterProcessSemaphoreV2 on the wire, so it shares its leases
// with Curator InterProcessSemaphoreV2 and InterProcessSemaphoreMutex
// clients of the same path and lease count. Every participant must use the
// same count: it is stored in the semaphore's node, and an acquire with
// another count fails with an error wrapping ErrInvalidArgument (Curator
// participants are not checked). A Semaphore is not reentrant: each Acquire
// takes a new lease, whatever its context. With more than one lease,
// holders are concurrent by design, so a resource they share cannot use the
// "highest token wins" fencing rule. A Semaphore is safe for concurrent use.
// See docs/protocol.md#semaphore.
type Semaphore struct {
	s      *Session
	path   string
	leases int
	lock   queue // the internal mutex at <path>/locks
	lease  queue // the lease nodes at <path>/leases
}

// NewSemaphore returns a semaphore of n leases at path on s. It does no
// I/O. It returns an error wrapping ErrInvalidArgument for a nil session, n
// below 1 or WithFailOpen (not implemented for semaphores), and
// ErrInvalidPath for an invalid path. WithData sets the lease nodes' data
// (default: this host's address); WithACL applies to every node it creates;
// WithRevocable gives each Hold a Revoked channel (an extension: Curator's
// semaphores are not revocable).
func NewSemaphore(s *Session, path string, n int, opts ...Option) (*Semaphore, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d leases, want at least 1", ErrInvalidArgument, n)
	}
	lease, err := newQueue(s, path, path+"/leases", recipe{mark: markLease, decide: leases(n), countAll: true}, opts)
	if err != nil {
		return nil, err
	}
	if lease.cfg.failOpen != 0 {
		return nil, fmt.Errorf("%w: WithFailOpen is not supported by semaphores", ErrInvalidArgument)
	}
	lock, err := newQueue(s, path+"/locks", path+"/locks", recipe{mark: markLock, decide: exclusive, jump: true, internal: true},
		[]Option{WithACL(lease.cfg.acl)})
	if err != nil {
		return nil, err
	}
	return &Semaphore{s: s, path: path, leases: n, lock: lock, lease: lease}, nil
}

// Path returns the semaphore's path.
func (m *Semaphore) Path() string { return m.path }

// Leases returns the number of leases.
func (m *Semaphore) Leases() int { return m.leases }

// Participants returns the lease nodes in creation order. Holds is true for
// the first Leases of them; a node beyond them is the one participant still
// waiting for a lease.
func (m *Semaphore) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, m.s, m.lease.dir, leaseView(m.leases))
}

// Acquire takes one lease, waiting until one is free, ctx is done, or the
// session expires while waiting; release the Hold, from any goroutine, to
// return it. On failure it returns a nil Hold and ctx's cause (wrapped with
// ErrUnreachable if the session was not connected then), ErrSessionExpired,
// ErrClosed or a ZooKeeper error, and leaves no node behind (deleted in the
// background if the connection is down).
func (m *Semaphore) Acquire(ctx context.Context) (*Hold, error) {
	hs, err := m.acquire(ctx, 1, &m.lock, &m.lease)
	if err != nil {
		return nil, err
	}
	return hs[0], nil
}

// TryAcquire takes one lease only if one is free now and no other
// participant is taking leases at this moment; otherwise it returns
// ErrLocked, having left nothing behind. ctx bounds the ZooKeeper requests.
func (m *Semaphore) TryAcquire(ctx context.Context) (*Hold, error) {
	hs, err := m.acquire(ctx, 1, m.lock.tryOnly(), m.lease.tryOnly())
	if err != nil {
		return nil, err
	}
	return hs[0], nil
}

// AcquireN takes n leases, all or nothing: it returns n Holds, or an error
// having released every lease it took. It keeps the internal mutex until it
// has all n, so two AcquireN calls never each hold part of what the other
// waits for. n must be from 1 to Leases (ErrInvalidArgument otherwise).
func (m *Semaphore) AcquireN(ctx context.Context, n int) ([]*Hold, error) {
	if n < 1 || n > m.leases {
		return nil, fmt.Errorf("%w: %d leases asked of a semaphore of %d", ErrInvalidArgument, n, m.leases)
	}
	return m.acquire(ctx, n, &m.lock, &m.lease)
}

// acquire takes n leases through lease while holding the internal mutex
// through lock (the queues, or their try copies, which write nothing while
// the leases are visibly all taken); every failure releases what it took.
func (m *Semaphore) acquire(ctx context.Context, n int, lock, lease *queue) (_ []*Hold, err error) {
	if err := m.s.begin(ctx); err != nil {
		return nil, err
	}
	start := m.s.mark()
	defer func() { err = lease.unreachable(err, start) }()
	if lease.probe { // a try writes nothing where it would wait: the leases first
		if err := m.s.waitReady(ctx); err != nil {
			return nil, err
		}
		if err := lease.refuse(ctx); err != nil {
			return nil, err
		}
		probed := *lease
		probed.probe = false
		lease = &probed
	}
	l, err := lock.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.Release() }() // Curator's finally: lock.release()
	// The lease count is checked while the internal mutex is held, alongside
	// the leases' own requests; a mismatch ends the wait for a lease.
	lctx, stopLeases := context.WithCancelCause(ctx)
	defer stopLeases(nil)
	checked := make(chan error, 1)
	go func() {
		err := checkCount(lctx, m.s, m.path, m.leases)
		if err != nil {
			stopLeases(err)
		}
		checked <- err
	}()
	holds := make([]*Hold, 0, n)
	defer func() {
		if err != nil {
			releaseAll(holds)
		}
	}()
	for range n {
		h, err := lease.acquire(lctx)
		if err != nil {
			stopLeases(err) // the check need not go on
			if cerr := <-checked; errors.Is(cerr, ErrInvalidArgument) {
				return nil, cerr // the mismatch ended the wait
			}
			return nil, err
		}
		holds = append(holds, h)
	}
	if err := <-checked; err != nil {
		return nil, err
	}
	return holds, nil
}
