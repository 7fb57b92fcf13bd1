package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"
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
// Every participant must use the same lease count: the count is not stored
// in ZooKeeper, and a participant configured for more leases admits itself
// when others would not.
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
func NewSemaphore(s *Session, path string, leases int, opts ...Option) (*Semaphore, error) {
	if leases < 1 {
		return nil, fmt.Errorf("%w: %d leases, want at least 1", ErrInvalidArgument, leases)
	}
	lease, err := newQueue(s, path, path+"/leases", markLease, opts)
	if err != nil {
		return nil, err
	}
	if lease.cfg.failOpen != 0 {
		return nil, fmt.Errorf("%w: WithFailOpen is not supported by semaphores", ErrInvalidArgument)
	}
	lock, err := newQueue(s, path+"/locks", path+"/locks", markLock, []Option{WithACL(lease.cfg.acl)})
	if err != nil {
		return nil, err
	}
	lock.decide, lock.jump = exclusive, true
	return &Semaphore{s: s, path: path, leases: leases, lock: lock, lease: lease}, nil
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
	leases := m.leases
	return participants(ctx, m.s, m.lease.dir, func(_ []contender, i int) (bool, int) { return i < leases, -1 })
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
	hs, err := m.acquire(ctx, 1, false)
	if err != nil {
		return nil, err
	}
	return hs[0], nil
}

// TryAcquire takes one lease only if one is free now and no other
// participant is taking leases at this moment; otherwise it returns
// ErrLocked, having left nothing behind. ctx bounds the ZooKeeper requests.
func (m *Semaphore) TryAcquire(ctx context.Context) (*Hold, error) {
	hs, err := m.acquire(ctx, 1, true)
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
	return m.acquire(ctx, n, false)
}

// acquire takes n leases under the internal mutex.
func (m *Semaphore) acquire(ctx context.Context, n int, try bool) ([]*Hold, error) {
	if err := m.s.begin(ctx); err != nil {
		return nil, err
	}
	hs, err := m.acquireOnce(ctx, n, try)
	return hs, m.lease.unreachable(err)
}

func (m *Semaphore) acquireOnce(ctx context.Context, n int, try bool) (_ []*Hold, err error) {
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	start := time.Now()
	if try {
		// Write nothing when the leases are visibly all taken.
		if err := m.lease.s.waitReady(ctx); err != nil {
			return nil, err
		}
		children, _, err := call2(ctx, func() ([]string, *zk.Stat, error) { return m.s.conn.Children(m.lease.dir) })
		if err == nil && len(children)+n > m.leases {
			return nil, ErrLocked
		}
	}
	lock, err := m.lock.acquire(ctx, try)
	if err != nil {
		return nil, err
	}
	defer m.s.abandon(lock.node(), lock.sid) // Curator's finally: lock.release()

	holds := make([]*Hold, 0, n)
	defer func() {
		if err != nil {
			for _, h := range holds {
				_ = h.Release()
			}
		}
	}()
	for range n {
		e, err := m.takeLease(ctx, try)
		if err != nil {
			return nil, err
		}
		h, err := m.s.newHold(ctx, &m.lease, e, start)
		if err != nil {
			m.s.abandon(e.node(), e.sid)
			return nil, err
		}
		holds = append(holds, h)
	}
	return holds, nil
}

// takeLease creates a lease node and waits until the leases directory has
// at most m.leases children. Any failure deletes the node.
func (m *Semaphore) takeLease(ctx context.Context, try bool) (_ *entry, err error) {
	e, err := m.lease.create(ctx)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			m.s.abandon(e.node(), e.sid)
		}
	}()
	if err := m.waitCount(ctx, e, try); err != nil {
		return nil, err
	}
	if e.stat != nil {
		// The token came with the create's reply, and waitCount's last
		// listing, made under this session, holds the node.
		return e, nil
	}
	ok, stat, err := call2(ctx, func() (bool, *zk.Stat, error) { return m.s.conn.Exists(e.node()) })
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case err != nil:
		return nil, fmt.Errorf("zklock: read %s: %w", e.node(), err)
	case !ok || stat.EphemeralOwner != e.sid:
		return nil, fmt.Errorf("%w: %s", ErrNodeGone, e.node())
	}
	e.stat = stat
	return e, nil
}

// waitCount lists the leases with a children watch until there are at most
// m.leases of them, our node included. Only the holder of the internal
// mutex waits here, so one watch per semaphore path is armed at a time.
func (m *Semaphore) waitCount(ctx context.Context, e *entry, try bool) error {
	for attempt := 0; ; {
		state, sid, changed := m.s.snapshot()
		switch {
		case state == StateClosed:
			return ErrClosed
		case state == StateExpired || sid != e.sid:
			return ErrSessionExpired
		}
		type listing struct {
			children []string
			ch       <-chan zk.Event
		}
		l, err := call(ctx, func() (listing, error) {
			children, _, ch, err := m.s.conn.ChildrenW(e.dir)
			return listing{children, ch}, err
		}, nil)
		children, ch := l.children, l.ch
		if err != nil && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			if err := m.lease.listFailed(ctx, e.dir, err, &attempt); err != nil {
				return err
			}
			continue
		}
		if !slices.Contains(children, e.name) {
			if _, now, _ := m.s.snapshot(); now != e.sid {
				return ErrSessionExpired
			}
			return fmt.Errorf("%w: %s", ErrNodeGone, e.node())
		}
		if len(children) <= m.leases {
			return nil
		}
		if try {
			return ErrLocked
		}
	wait:
		for {
			select {
			case <-ch:
				break wait
			case <-changed:
				if state, _, now := m.s.snapshot(); state == StateSuspended {
					changed = now // go-zookeeper re-arms the watch on reconnect
					continue
				}
				break wait
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
	}
}
