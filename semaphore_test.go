package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func newSemaphore(t testing.TB, s *zklock.Session, path string, leases int, opts ...zklock.Option) *zklock.Semaphore {
	t.Helper()
	m, err := zklock.NewSemaphore(s, path, leases, opts...)
	require.NoError(t, err)
	return m
}

func newSemMutex(t testing.TB, s *zklock.Session, path string, opts ...zklock.Option) *zklock.SemaphoreMutex {
	t.Helper()
	m, err := zklock.NewSemaphoreMutex(s, path, opts...)
	require.NoError(t, err)
	return m
}

// occupancy counts the holders of a semaphore and remembers the most it
// ever saw at once.
type occupancy struct {
	inside, most atomic.Int32
	total        atomic.Int32
}

func (o *occupancy) enter() int32 {
	n := o.inside.Add(1)
	o.total.Add(1)
	for {
		m := o.most.Load()
		if n <= m || o.most.CompareAndSwap(m, n) {
			return n
		}
	}
}

func (o *occupancy) leave() { o.inside.Add(-1) }

// Never more than N holders among 8 contenders on 2 sessions over 320
// acquisitions, for N = 1 (the semaphore mutex) and N = 3. Each holder
// checks its token against its lease node's czxid while it holds, so a hold
// lasts at least one round trip.
func TestIntegration_SemaphoreNeverExceedsLeases(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	sessions := []*zklock.Session{connect(t, c), connect(t, c)}
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("leases=%d", n), func(t *testing.T) {
			path := fmt.Sprintf("/sem/bound%d", n)
			const workers, rounds = 8, 40
			var (
				occ  occupancy
				errs = make(chan error, workers*rounds)
				wg   sync.WaitGroup
			)
			for w := range workers {
				s := sessions[w%len(sessions)]
				acquire := newSemaphore(t, s, path, n).Acquire
				if n == 1 {
					acquire = newSemMutex(t, s, path).Lock
				}
				wg.Go(func() {
					for range rounds {
						h, err := acquire(ctxTimeout(t, time.Minute))
						if err != nil {
							errs <- err
							return
						}
						if got := occ.enter(); got > int32(n) {
							errs <- fmt.Errorf("%d holders of %d leases", got, n)
						}
						// Hold until all N leases are taken (or for 50 round
						// trips), then 8 round trips more (about one acquisition), so that holders
						// overlap and an extra one would be counted.
						for i, extra := 0, 8; i < 50 && extra > 0; i++ {
							if occ.inside.Load() >= int32(n) {
								extra--
							}
							ok, stat, err := s.Conn().Exists(h.Node())
							if err != nil || !ok || stat.Czxid != h.Token() || !strings.Contains(h.Node(), "/leases/_c_") {
								errs <- fmt.Errorf("token %d of %s is not its lease node's czxid (%v, %v)", h.Token(), h.Node(), stat, err)
								break
							}
						}
						occ.leave()
						if err := h.Release(); err != nil {
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
			require.EqualValues(t, workers*rounds, occ.total.Load())
			t.Logf("%d acquisitions, at most %d holders at once", occ.total.Load(), occ.most.Load())
			require.LessOrEqual(t, occ.most.Load(), int32(n))
			require.Equal(t, int32(n), occ.most.Load(), "the holders never overlapped: the bound was not tested")
			require.Empty(t, children(t, sessions[0].Conn(), path+"/leases"))
			require.Empty(t, children(t, sessions[0].Conn(), path+"/locks"))
		})
	}
}

func TestIntegration_SemaphoreWireLayout(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	h, err := newSemaphore(t, s, "/sem/layout", 2, zklock.WithData([]byte("me"))).Acquire(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.Regexp(t, `^/sem/layout/leases/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lease-\d{10}$`, h.Node())
	require.Equal(t, "/sem/layout", h.Path())
	data, _, err := s.Conn().Get(h.Node())
	require.NoError(t, err)
	require.Equal(t, "me", string(data))
	require.Empty(t, children(t, s.Conn(), "/sem/layout/locks"), "the internal lock is released once the lease is taken")
	for _, p := range []string{"/sem/layout", "/sem/layout/locks", "/sem/layout/leases"} {
		_, stat, err := s.Conn().Get(p)
		if p == "/sem/layout/locks" && errors.Is(err, zk.ErrNoNode) {
			continue // an empty container: the server may already have reaped it
		}
		require.NoError(t, err)
		require.Zero(t, stat.EphemeralOwner, p)
		if p == "/sem/layout" {
			data, _, err := s.Conn().Get(p)
			require.NoError(t, err)
			require.Equal(t, "2", string(data), "the semaphore's node holds its lease count")
			continue
		}
		require.Zero(t, stat.DataLength, "%s: parents are empty containers", p)
	}
	require.NoError(t, h.Release())
}

// n leases are taken all or nothing; a failed AcquireN leaves nothing.
func TestIntegration_SemaphoreAcquireN(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	a, b := newSemaphore(t, s1, "/sem/n", 3), newSemaphore(t, s2, "/sem/n", 3)

	for _, n := range []int{0, -1, 4} {
		_, err := b.AcquireN(ctxTimeout(t, time.Second), n)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "n=%d", n)
	}
	held, err := a.AcquireN(ctxTimeout(t, 10*time.Second), 2)
	require.NoError(t, err)
	require.Len(t, held, 2)
	require.NotEqual(t, held[0].Node(), held[1].Node())
	require.Less(t, held[0].Token(), held[1].Token())

	// Only one lease is free: asking for two fails and gives back the one
	// it took.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = b.AcquireN(ctx, 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	ps, err := b.Participants(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.Len(t, ps, 2)
	for i, p := range ps {
		require.Equal(t, held[i].Node(), p.Path)
		require.Equal(t, held[i].Token(), p.Token)
		require.Equal(t, zklock.KindLease, p.Kind)
		require.True(t, p.Holds)
	}
	require.Eventually(t, func() bool {
		return len(children(t, s1.Conn(), "/sem/n/leases")) == 2 && len(children(t, s1.Conn(), "/sem/n/locks")) == 0
	}, 10*time.Second, 5*time.Millisecond, "only a's leases remain")

	// Asking again, it gets both once a lease comes back.
	type result struct {
		hs  []*zklock.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		hs, err := b.AcquireN(ctxTimeout(t, 30*time.Second), 2)
		done <- result{hs, err}
	}()
	require.Eventually(t, func() bool { return len(children(t, s1.Conn(), "/sem/n/leases")) == 4 }, 10*time.Second, 5*time.Millisecond,
		"b has taken the free lease and waits for a second one")
	select {
	case r := <-done:
		t.Fatalf("AcquireN returned with one lease free: %v", r.err)
	default:
	}
	ps, err = a.Participants(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.Len(t, ps, 4)
	require.Equal(t, []bool{true, true, true, false}, []bool{ps[0].Holds, ps[1].Holds, ps[2].Holds, ps[3].Holds},
		"the newest lease node is the one waiting")
	require.NoError(t, held[0].Release())
	r := <-done
	require.NoError(t, r.err)
	require.Len(t, r.hs, 2)
	require.Len(t, children(t, s1.Conn(), "/sem/n/leases"), 3)
	for _, h := range append(r.hs, held[1]) {
		require.NoError(t, h.Release())
	}
	require.Empty(t, children(t, s1.Conn(), "/sem/n/leases"))
}

// The semaphore mutex: release from another goroutine, double release, no
// re-entry, TryLock.
func TestIntegration_SemaphoreMutexRelease(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	m := newSemMutex(t, s, "/sem/mutex")
	require.Equal(t, "/sem/mutex", m.Path())
	h, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)

	_, err = m.TryLock(ctxTimeout(t, 10*time.Second))
	require.ErrorIs(t, err, zklock.ErrLocked)
	_, err = m.TryLock(h.Context())
	require.ErrorIs(t, err, zklock.ErrLocked, "not reentrant, even with the hold's context")
	ctx, cancel := context.WithTimeout(h.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = m.Lock(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a second Lock by the holder waits like anyone else")
	require.Len(t, children(t, s.Conn(), "/sem/mutex/leases"), 1)
	require.Empty(t, children(t, s.Conn(), "/sem/mutex/locks"))

	released := make(chan error, 1)
	go func() { released <- h.Release() }()
	require.NoError(t, <-released)
	require.ErrorIs(t, h.Release(), zklock.ErrNotHeld)
	require.ErrorIs(t, h.Err(), zklock.ErrReleased)
	require.Empty(t, children(t, s.Conn(), "/sem/mutex/leases"))

	h2, err := m.TryLock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.Greater(t, h2.Token(), h.Token())
	require.NoError(t, h2.Release())
}

// A SemaphoreMutex is a Locker: a MultiLock takes it with a Mutex, all or
// nothing.
func TestIntegration_SemaphoreMutexInMultiLock(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	sm := newSemMutex(t, s1, "/sem/multi/b")
	ml, err := zklock.NewMultiLock(sm, newMutex(t, s1, "/sem/multi/a"))
	require.NoError(t, err)
	mh, err := ml.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.Len(t, mh.Holds(), 2)
	_, err = newSemMutex(t, s2, "/sem/multi/b").TryLock(ctxTimeout(t, 10*time.Second))
	require.ErrorIs(t, err, zklock.ErrLocked)
	require.NoError(t, mh.Release())
	require.Empty(t, children(t, s2.Conn(), "/sem/multi/b/leases"))

	// Taken elsewhere: the multi-lock gives up and leaves nothing.
	other, err := newSemMutex(t, s2, "/sem/multi/b").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = ml.Lock(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Empty(t, children(t, s2.Conn(), "/sem/multi/a"))
	require.Empty(t, children(t, s2.Conn(), "/sem/multi/b/locks"))
	require.Len(t, children(t, s2.Conn(), "/sem/multi/b/leases"), 1)
	require.NoError(t, other.Release())
}

func TestIntegration_SemaphoreBadInput(t *testing.T) {
	_, err := zklock.NewSemaphore(nil, "/sem/a", 1)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewSemaphoreMutex(nil, "/sem/a")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	c := zktest.Start(t)
	s := connect(t, c)
	for _, n := range []int{0, -3} {
		_, err := zklock.NewSemaphore(s, "/sem/a", n)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	}
	_, err = zklock.NewSemaphoreMutex(s, "/sem/a", zklock.WithFailOpen(time.Second))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	for _, p := range []string{"", "sem", "/sem/", "/"} {
		_, err := zklock.NewSemaphoreMutex(s, p)
		require.ErrorIs(t, err, zklock.ErrInvalidPath, "%q", p)
	}
	m := newSemaphore(t, s, "/sem/a", 2)
	//nolint:staticcheck // a nil context is the bad input under test
	_, err = m.Acquire(nil) //lint:ignore SA1012 testing bad input
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Acquire(cancelled)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, children(t, s.Conn(), "/sem/a"), "nothing created")
}
