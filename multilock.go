package zklock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
)

// A Locker is a lock that a MultiLock can take: a *Mutex, a *SemaphoreMutex
// or a half of an *RWLock. Path and Kind give the canonical order.
type Locker interface {
	// Lock acquires the lock, waiting until ctx is done; see Mutex.Lock.
	Lock(ctx context.Context) (*Hold, error)
	// Path returns the lock path.
	Path() string
	// Kind returns the kind of node the lock queues (KindLock, KindRead, ...).
	Kind() Kind
}

// nilLocker is implemented by the library's Lockers, so that a typed nil
// pointer (a *Mutex that was never made) is refused like a nil interface.
type nilLocker interface{ isNil() bool }

// A MultiLock acquires several locks as one, all or nothing, as Curator's
// InterProcessMultiLock does, but always in a canonical order (by path, then
// kind) whatever order they were given in, so two multi-locks over the same
// paths never deadlock each other (only locks taken outside a MultiLock
// while one is held can), and within one context for the whole acquisition.
// It is safe for concurrent use; each Lock queues for every member as a
// separate participant. See docs/protocol.md#multi-lock.
type MultiLock struct {
	locks []Locker // canonical order
}

// NewMultiLock returns a multi-lock over locks. It does no I/O. It returns
// an error wrapping ErrInvalidArgument if there are no locks, one is nil, or
// two share a path: two locks on one path (the same lock twice, or both
// halves of a read-write lock) would wait for each other. Locks on
// different sessions may be mixed.
func NewMultiLock(locks ...Locker) (*MultiLock, error) {
	if len(locks) == 0 {
		return nil, fmt.Errorf("%w: a multi-lock needs at least one lock", ErrInvalidArgument)
	}
	sorted := make([]Locker, len(locks))
	for i, l := range locks {
		if l == nil {
			return nil, fmt.Errorf("%w: lock %d is nil", ErrInvalidArgument, i)
		}
		if n, ok := l.(nilLocker); ok && n.isNil() {
			return nil, fmt.Errorf("%w: lock %d is a nil %T", ErrInvalidArgument, i, l)
		}
		sorted[i] = l
	}
	slices.SortStableFunc(sorted, func(a, b Locker) int {
		return cmp.Or(cmp.Compare(a.Path(), b.Path()), cmp.Compare(a.Kind(), b.Kind()))
	})
	for i := 1; i < len(sorted); i++ {
		if sorted[i].Path() == sorted[i-1].Path() {
			return nil, fmt.Errorf("%w: two locks on %s (%s and %s) in one multi-lock would wait for each other",
				ErrInvalidArgument, sorted[i].Path(), sorted[i-1].Kind(), sorted[i].Kind())
		}
	}
	return &MultiLock{locks: sorted}, nil
}

// Locks returns the member locks in the order Lock takes them.
func (m *MultiLock) Locks() []Locker { return slices.Clone(m.locks) }

// Lock acquires every member in the canonical order, all within ctx. If a
// member fails (ctx ends, the session expires, a member already taken is
// lost meanwhile), those taken are released in reverse order and Lock
// returns a nil MultiHold and the error, joined with any release errors;
// every node it queued is deleted. A context carrying holds of members (such
// as a MultiHold's Context) re-enters them. A member made WithFailOpen that
// answers ErrUnlocked fails the whole acquisition.
func (m *MultiLock) Lock(ctx context.Context) (*MultiHold, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	// The acquisition stops as soon as a member already taken is lost.
	actx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	holds := make([]*Hold, 0, len(m.locks))
	var stops []func() bool
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for _, l := range m.locks {
		h, err := l.Lock(actx)
		if err == nil && h == nil {
			err = fmt.Errorf("%w: %T returned no hold", ErrInvalidArgument, l)
		}
		if err == nil {
			if lerr := h.Err(); lerr != nil {
				err = lerr
			}
		}
		if err != nil {
			if h != nil {
				holds = append(holds, h)
			}
			errs := []error{fmt.Errorf("zklock: multi-lock: %s %s: %w", l.Kind(), l.Path(), err)}
			return nil, errors.Join(append(errs, releaseAll(holds)...)...)
		}
		holds = append(holds, h)
		stops = append(stops, context.AfterFunc(h.Context(), func() {
			abort(fmt.Errorf("zklock: multi-lock member %s: %w", h.Node(), context.Cause(h.Context())))
		}))
	}
	return newMultiHold(ctx, holds), nil
}

// releaseAll releases holds in reverse order and returns every failure.
func releaseAll(holds []*Hold) []error {
	var errs []error
	for i := len(holds) - 1; i >= 0; i-- {
		if err := holds[i].Release(); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// A MultiHold is one successful acquisition of a MultiLock: a hold on every
// member. It is valid until it is released or any member is lost.
type MultiHold struct {
	holds    []*Hold // canonical order
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stops    []func() bool
	released atomic.Bool
}

func newMultiHold(ctx context.Context, holds []*Hold) *MultiHold {
	// The context carries every member's hold, for re-entry, and none of
	// the acquisition's cancellation.
	base := context.WithoutCancel(ctx)
	for _, h := range holds {
		base = context.WithValue(base, h.h.key, h.h)
	}
	mh := &MultiHold{holds: holds}
	mh.ctx, mh.cancel = context.WithCancelCause(base)
	for _, h := range holds {
		mh.stops = append(mh.stops, context.AfterFunc(h.Context(), func() {
			mh.cancel(fmt.Errorf("zklock: multi-lock member %s: %w", h.Node(), context.Cause(h.Context())))
		}))
	}
	return mh
}

// Holds returns each member's hold, in the canonical order, for its Token,
// Node and Guard. Release the MultiHold, not the members.
func (mh *MultiHold) Holds() []*Hold { return slices.Clone(mh.holds) }

// Context returns a context cancelled when any member is lost or the
// MultiHold is released (its cause wraps ErrLost, naming the member, or is
// ErrReleased). Passed to a member's Lock, it re-enters that member.
func (mh *MultiHold) Context() context.Context { return mh.ctx }

// Done returns a channel closed when the MultiHold ends: any member lost, or
// released.
func (mh *MultiHold) Done() <-chan struct{} { return mh.ctx.Done() }

// Err returns nil while every member is held; afterwards an error wrapping
// ErrLost (naming the lost member) or ErrReleased.
func (mh *MultiHold) Err() error {
	if mh.ctx.Err() == nil {
		return nil
	}
	return context.Cause(mh.ctx)
}

// Release releases every member in reverse canonical order, continuing past
// failures, and returns them all joined (errors.Join); a member that was
// lost reports its loss error. Releasing twice returns ErrNotHeld.
func (mh *MultiHold) Release() error {
	if mh == nil || !mh.released.CompareAndSwap(false, true) {
		return ErrNotHeld
	}
	mh.cancel(ErrReleased)
	for _, stop := range mh.stops {
		stop()
	}
	return errors.Join(releaseAll(mh.holds)...)
}
