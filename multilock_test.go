package zklock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func newMulti(t testing.TB, locks ...zklock.Locker) *zklock.MultiLock {
	t.Helper()
	m, err := zklock.NewMultiLock(locks...)
	require.NoError(t, err)
	return m
}

// Two multi-locks over the same paths given in opposite orders, on
// different sessions, never deadlock, and exclude each other.
func TestIntegration_MultiLockOppositeOrders(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	const a, b = "/locks/multi/a", "/locks/multi/b"
	rw1, rw2 := newRW(t, s1, b), newRW(t, s2, b)
	m1 := newMulti(t, newMutex(t, s1, a), rw1.WriteLock())
	m2 := newMulti(t, rw2.WriteLock(), newMutex(t, s2, a))
	require.Equal(t, a, m2.Locks()[0].Path(), "canonical order: by path")

	const rounds = 100
	var (
		inside, overlap atomic.Int32
		wg              sync.WaitGroup
		errs            = make(chan error, 2)
	)
	ctx := ctxTimeout(t, 30*time.Second)
	for _, m := range []*zklock.MultiLock{m1, m2} {
		wg.Go(func() {
			for range rounds {
				mh, err := m.Lock(ctx)
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					overlap.Add(1)
				}
				if len(mh.Holds()) != 2 || mh.Err() != nil {
					errs <- errors.New("a multi-hold without both members")
				}
				inside.Add(-1)
				if err := mh.Release(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, overlap.Load(), "two multi-locks held at once")
	require.Empty(t, children(t, s1.Conn(), a))
	require.Empty(t, children(t, s1.Conn(), b))
}

// A multi-lock whose last member is held elsewhere gives up at its deadline
// and leaves no node of its session in any member's directory.
func TestIntegration_MultiLockDeadlineLeavesNothing(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	var mu sync.Mutex
	var events []string
	s1 := connect(t, c, zklock.WithObserver(func(ev zklock.Event) {
		if ev.Kind == zklock.EventAcquired || ev.Kind == zklock.EventReleased {
			mu.Lock()
			events = append(events, ev.Kind.String()+" "+ev.Path)
			mu.Unlock()
		}
	}))
	s2 := connect(t, c)
	dirs := []string{"/locks/multi/x1", "/locks/multi/x2", "/locks/multi/x3"}
	other, err := newMutex(t, s2, dirs[2]).Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	// Given out of order: the held one is still taken last.
	m := newMulti(t, newMutex(t, s1, dirs[2]), newRW(t, s1, dirs[0]).ReadLock(), newMutex(t, s1, dirs[1]))

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	mh, err := m.Lock(ctx)
	require.Nil(t, mh)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second, "one deadline bounds the whole acquisition")
	// What was taken was released, in reverse order. (On a very slow
	// machine the deadline may pass before the last member is reached.)
	mu.Lock()
	got := append([]string(nil), events...)
	mu.Unlock()
	want := []string{"acquired " + dirs[0], "acquired " + dirs[1], "released " + dirs[1], "released " + dirs[0]}
	if !strings.Contains(err.Error(), dirs[2]) {
		t.Logf("deadline passed before the last member: %v", err)
		want = want[:0]
		for _, e := range got {
			if strings.HasPrefix(e, "acquired ") {
				want = append(want, e)
			}
		}
		for i := len(want) - 1; i >= 0; i-- {
			want = append(want, "released "+strings.TrimPrefix(want[i], "acquired "))
		}
	}
	require.Equal(t, want, got)
	for _, d := range dirs {
		for _, name := range children(t, s2.Conn(), d) {
			ok, stat, err := s2.Conn().Exists(d + "/" + name)
			require.NoError(t, err)
			if ok {
				require.NotEqual(t, s1.ID(), stat.EphemeralOwner, "node %s/%s of the failed multi-lock left behind", d, name)
			}
		}
	}
	require.Len(t, children(t, s2.Conn(), dirs[2]), 1)
	require.NoError(t, other.Release())

	// Once free, it is taken, and released in full.
	mh, err = m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	hs := mh.Holds()
	require.Len(t, hs, 3)
	for i, d := range dirs {
		require.Equal(t, d, hs[i].Path())
		require.Len(t, children(t, s1.Conn(), d), 1)
	}
	require.NoError(t, mh.Release())
	require.ErrorIs(t, mh.Release(), zklock.ErrNotHeld)
	require.ErrorIs(t, mh.Err(), zklock.ErrReleased)
	for _, d := range dirs {
		require.Empty(t, children(t, s1.Conn(), d))
	}
}

// Losing one member (its session expires) fires the multi-hold's loss
// signal; releasing then reports that loss and still deletes the others.
func TestIntegration_MultiLockMemberLoss(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	m := newMulti(t, newMutex(t, s1, "/locks/multi/l1"), newRW(t, s2, "/locks/multi/l2").WriteLock())
	mh, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.NoError(t, mh.Err())
	select {
	case <-mh.Done():
		t.Fatal("loss signal before any loss")
	default:
	}

	require.NoError(t, c.Expire(s2.ID()))
	select {
	case <-mh.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("no loss signal after a member's session expired")
	}
	require.ErrorIs(t, mh.Err(), zklock.ErrLost)
	require.ErrorIs(t, context.Cause(mh.Context()), zklock.ErrLost)
	require.Contains(t, mh.Err().Error(), "/locks/multi/l2")
	require.NoError(t, mh.Holds()[0].Err(), "the other member is still held")

	err = mh.Release()
	require.ErrorIs(t, err, zklock.ErrLost, "release reports the lost member")
	require.Empty(t, children(t, s1.Conn(), "/locks/multi/l1"), "the held member was released")
}

// A multi-hold's context re-enters its members; bad input is refused.
func TestIntegration_MultiLockReentryAndBadInput(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	mu := newMutex(t, s, "/locks/multi/r1")
	rw := newRW(t, s, "/locks/multi/r2")
	m := newMulti(t, rw.ReadLock(), mu)
	mh, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	h, err := mu.TryLock(mh.Context())
	require.NoError(t, err, "the multi-hold's context re-enters a member")
	require.Equal(t, mh.Holds()[0].Node(), h.Node())
	require.NoError(t, h.Release())
	_, err = rw.WriteLock().Lock(mh.Context())
	require.ErrorIs(t, err, zklock.ErrUpgrade)
	require.NoError(t, mh.Release())
	require.Empty(t, children(t, s.Conn(), "/locks/multi/r1"))
	require.Empty(t, children(t, s.Conn(), "/locks/multi/r2"))

	var nilMutex *zklock.Mutex
	for _, tt := range []struct {
		name  string
		locks []zklock.Locker
	}{
		{"none", nil},
		{"nil", []zklock.Locker{mu, nil}},
		{"typed nil", []zklock.Locker{mu, nilMutex}},
		{"duplicate", []zklock.Locker{mu, newMutex(t, s, "/locks/multi/r1")}},
		{"both halves", []zklock.Locker{rw.ReadLock(), rw.WriteLock()}},
	} {
		_, err := zklock.NewMultiLock(tt.locks...)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, tt.name)
	}
	//lint:ignore SA1012 a nil context is bad input that must be refused
	_, err = m.Lock(nil) //nolint:staticcheck
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
}
