package zklock

import (
	"context"
	"errors"
	"fmt"
)

// A Semaphore is a counting semaphore with a fixed number of leases:
// Curator's InterProcessSemaphoreV2 on the wire, so it shares its leases with
// Curator InterProcessSemaphoreV2 and InterProcessSemaphoreMutex clients of
// the same path and the same lease count.
//
// The layout is Curator's, under CONTAINER parents:
//
//	<path>/locks/_c_<uuid>-lock-<seq>    an internal Mutex, held only while taking leases
//	<path>/leases/_c_<uuid>-lease-<seq>  one ephemeral-sequential node per lease held
//
// Taking a lease: lock the internal mutex, create the lease node, wait until
// <path>/leases has at most the lease count of children (every child counts,
// foreign ones too, as in Curator), then unlock the internal mutex. Leases
// are unordered: whoever has a node under leases holds one. Because the
// internal mutex serialises the creation of lease nodes, a lease's token (the
// czxid of its node) is greater than that of every lease taken before it.
//
// With more than one lease, holders are concurrent by design: a resource
// shared by them cannot use the single "highest token wins" fencing rule;
// Token still identifies each lease and orders their grants.
//
// Every participant must use the same lease count. The count is stored as
// the data of the node at path (the decimal count, as kazoo's Semaphore
// stores its max_leases; Curator leaves that data empty and never reads
// it), and an acquire by a participant configured with another count fails
// with an error wrapping ErrInvalidArgument. Curator's semaphores neither
// store nor check it: a Curator participant with another count is not
// refused.
//
// A Semaphore is not reentrant: each Acquire takes a new lease, whatever
// context it is given. It is safe for concurrent use by many goroutines.
type Semaphore struct {
	s      *Session
	path   string
	leases int
	lock   queue // the internal mutex at <path>/locks
	lease  queue // the lease nodes at <path>/leases
}

// NewSemaphore returns a semaphore of leases leases at path on s. It does no
// I/O: the nodes are created on the first acquire. It returns an error
// wrapping ErrInvalidArgument for a nil session or a lease count below 1,
// and ErrInvalidPath for an invalid path.
//
// Options: WithData sets the lease nodes' data (default: this host's
// address, as Curator's default); WithACL applies to every node the
// semaphore creates; WithRevocable gives each Hold a Revoked channel (an
// extension: Curator's semaphores are not revocable, but its Revoker works
// on any node) and stores empty data. The internal mutex's nodes always
// carry the host address, as Curator's do. WithFailOpen is not implemented
// for semaphores and is refused with ErrInvalidArgument.
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
// the first Leases of them: lease creation is serialised by the internal
// mutex and a lease is granted before the next is created, so a node beyond
// the lease count is the one participant still waiting for a lease.
func (m *Semaphore) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, m.s, m.lease.dir, leaseView(m.leases))
}

// Acquire takes one lease, waiting until one is free, ctx is done, or the
// session expires while waiting. The Hold's Token is the czxid of the lease
// node and its Done channel closes if the lease may be lost (see Hold).
// Release the Hold, from any goroutine, to return the lease.
//
// On failure Acquire returns a nil Hold and an error: ctx's cause if it
// ended (wrapped with ErrUnreachable if the session was not connected then),
// ErrSessionExpired, ErrClosed, or a ZooKeeper error. Neither the
// internal lock node nor the lease node is left behind: both are deleted
// before or, if the connection is down, after Acquire returns.
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

// AcquireN takes n leases, all or nothing: either it returns n Holds, or it
// returns an error having released every lease it took. Unlike Curator,
// which takes the internal mutex once per lease, AcquireN keeps the internal
// mutex until it has all n leases, so two AcquireN calls never each hold a
// part of what the other waits for. n must be between 1 and the lease count
// (ErrInvalidArgument otherwise: more could never be granted).
func (m *Semaphore) AcquireN(ctx context.Context, n int) ([]*Hold, error) {
	if n < 1 || n > m.leases {
		return nil, fmt.Errorf("%w: %d leases asked of a semaphore of %d", ErrInvalidArgument, n, m.leases)
	}
	return m.acquire(ctx, n, &m.lock, &m.lease)
}

// acquire takes n leases through lease while holding the internal mutex
// through lock (the queues themselves, or their try copies, which refuse
// at once: a try writes nothing while the leases are visibly all taken).
// The internal mutex is a hold like any other, so its release hands it to
// a local waiter without a listing; every failure releases what was taken.
func (m *Semaphore) acquire(ctx context.Context, n int, lock, lease *queue) (_ []*Hold, err error) {
	if err := m.s.begin(ctx); err != nil {
		return nil, err
	}
	defer func() { err = lease.unreachable(err) }()
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

// watchDir waits, on this goroutine, for the directory to change (see
// queue.watchDir).
func (w *waiter) watchDir() step {
	held, err := w.q.watchDir(w.ctx, w.e)
	switch {
	case err != nil:
		return w.fail(err)
	case held:
		return stepHold
	}
	return stepList
}

// watchDir lists the directory with a children watch and reports whether
// our node holds by that listing; if not, it waits for the directory or the
// session to change, or for ctx. One waiter at a time waits this way on a
// directory (a semaphore's leases, under its internal lock), so the watch
// wakes no herd.
func (q *queue) watchDir(ctx context.Context, e *entry) (bool, error) {
	_, _, changed := q.s.snapshot()
	children, ch, err := q.s.listWatch(ctx, e.dir)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, context.Cause(ctx)
	case err != nil:
		return false, nil // listing again reports or retries the error
	}
	cs := contenders(children, q.countAll)
	if ours := indexOf(cs, e.name); ours >= 0 {
		if keep, _ := sameCreate(cs, ours); keep != ours {
			return false, nil // listing again adopts it
		}
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
