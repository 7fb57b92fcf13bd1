package zklock_test

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func newRW(t testing.TB, s *zklock.Session, p string, opts ...zklock.Option) *zklock.RWLock {
	t.Helper()
	rw, err := zklock.NewRWLock(s, p, opts...)
	require.NoError(t, err)
	return rw
}

// lockAsync starts l.Lock(ctx) in a goroutine; the hold or the error
// arrives on the returned channels.
func lockAsync(ctx context.Context, l interface {
	Lock(context.Context) (*zklock.Hold, error)
}) (<-chan *zklock.Hold, <-chan error) {
	got, errs := make(chan *zklock.Hold, 1), make(chan error, 1)
	go func() {
		h, err := l.Lock(ctx)
		if err != nil {
			errs <- err
			return
		}
		got <- h
	}()
	return got, errs
}

func waitHold(t *testing.T, got <-chan *zklock.Hold, errs <-chan error, what string) *zklock.Hold {
	t.Helper()
	select {
	case h := <-got:
		return h
	case err := <-errs:
		t.Fatalf("%s: %v", what, err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not acquired", what)
	}
	return nil
}

// notAcquired checks that a pending Lock has not returned, and keeps
// checking for d: a wrongly granted hold shows up within it.
func notAcquired(t *testing.T, got <-chan *zklock.Hold, errs <-chan error, d time.Duration, what string) {
	t.Helper()
	pending := func() bool { return len(got) > 0 || len(errs) > 0 }
	require.False(t, pending(), what)
	if d > 0 {
		require.Never(t, pending, d, 10*time.Millisecond, what)
	}
}

func czxidOf(t *testing.T, s *zklock.Session, node string) int64 {
	t.Helper()
	ok, stat, err := s.Conn().Exists(node)
	require.NoError(t, err)
	require.True(t, ok, "%s does not exist", node)
	return stat.Czxid
}

func waitChildren(t *testing.T, s *zklock.Session, dir string, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool { return len(children(t, s.Conn(), dir)) == n }, 20*time.Second, 5*time.Millisecond,
		"waiting for %d children of %s", n, dir)
	return children(t, s.Conn(), dir)
}

func TestIntegration_RWReadersShareWriterExcludes(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s1, s2, s3 := connect(t, c), connect(t, c), connect(t, c)
	const p = "/locks/rw/share"
	ctx := ctxTimeout(t, 30*time.Second)

	// Two readers on different sessions hold at once.
	r1, err := newRW(t, s1, p).ReadLock().Lock(ctx)
	require.NoError(t, err)
	r2, err := newRW(t, s2, p).ReadLock().TryLock(ctx)
	require.NoError(t, err, "a second reader must share")
	require.NoError(t, r1.Err())
	require.NoError(t, r2.Err())
	require.Regexp(t, `^_c_[0-9a-f-]{36}-__READ__\d{10}$`, path.Base(r1.Node()))
	ps, err := newRW(t, s3, p).Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.True(t, ps[0].Holds && ps[1].Holds, "both readers hold: %+v", ps)
	require.Equal(t, zklock.KindRead, ps[0].Kind)

	// A writer waits for both readers.
	w := newRW(t, s3, p).WriteLock()
	_, err = w.TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	got, errs := lockAsync(ctx, w)
	waitChildren(t, s1, p, 3)
	require.NoError(t, r1.Release())
	notAcquired(t, got, errs, 200*time.Millisecond, "writer acquired while a reader held")
	require.NoError(t, r2.Release())
	wh := waitHold(t, got, errs, "writer")
	require.Regexp(t, `-__WRIT__\d{10}$`, wh.Node())

	// The writer excludes readers and writers.
	_, err = newRW(t, s1, p).ReadLock().TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	_, err = newRW(t, s2, p).WriteLock().TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err = newRW(t, s1, p).ReadLock().Lock(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, wh.Release())
	require.Empty(t, children(t, s1.Conn(), p))
}

// Readers and writers on two sessions hammer one lock; shared counters,
// checked by both kinds on entry and exit, catch a reader inside with a
// writer or two writers at once.
func TestIntegration_RWExclusionCounters(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	sessions := []*zklock.Session{connect(t, c), connect(t, c)}
	const p = "/locks/rw/counters"
	const readers, writers, rounds = 4, 3, 15
	var (
		nread, nwrite  atomic.Int32
		maxRead        atomic.Int32
		violations     atomic.Int32
		reads, writesN atomic.Int32
		wg             sync.WaitGroup
		errs           = make(chan error, readers+writers)
	)
	check := func(s *zklock.Session, h *zklock.Hold) error {
		// A round trip inside the critical section widens the window in
		// which an overlap would show.
		ok, stat, err := s.Conn().Exists(h.Node())
		if err != nil || !ok || stat.Czxid != h.Token() {
			return fmt.Errorf("token %d of %s is not its czxid (%v, %v)", h.Token(), h.Node(), stat, err)
		}
		return nil
	}
	for i := range readers + writers {
		s := sessions[i%len(sessions)]
		rw := newRW(t, s, p)
		isReader := i < readers
		wg.Go(func() {
			for range rounds {
				half := rw.WriteLock()
				if isReader {
					half = rw.ReadLock()
				}
				h, err := half.Lock(ctxTimeout(t, time.Minute))
				if err != nil {
					errs <- err
					return
				}
				if isReader {
					n := nread.Add(1)
					for m := maxRead.Load(); n > m && !maxRead.CompareAndSwap(m, n); m = maxRead.Load() {
					}
					if nwrite.Load() != 0 {
						violations.Add(1)
					}
					err = check(s, h)
					if nwrite.Load() != 0 {
						violations.Add(1)
					}
					nread.Add(-1)
					reads.Add(1)
				} else {
					if nwrite.Add(1) != 1 || nread.Load() != 0 {
						violations.Add(1)
					}
					err = check(s, h)
					if nwrite.Load() != 1 || nread.Load() != 0 {
						violations.Add(1)
					}
					nwrite.Add(-1)
					writesN.Add(1)
				}
				if rerr := h.Release(); err == nil {
					err = rerr
				}
				if err != nil {
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
	require.Zero(t, violations.Load(), "a reader overlapped a writer, or two writers overlapped")
	require.EqualValues(t, readers*rounds, reads.Load())
	require.EqualValues(t, writers*rounds, writesN.Load())
	t.Logf("max concurrent readers observed: %d", maxRead.Load())
	require.Empty(t, children(t, sessions[0].Conn(), p))
}

// A reader queued behind a waiting writer does not overtake it.
func TestIntegration_RWFIFOAcrossKinds(t *testing.T) {
	c := zktest.Start(t)
	s1, s2, s3 := connect(t, c), connect(t, c), connect(t, c)
	const p = "/locks/rw/fifo"
	ctx := ctxTimeout(t, 30*time.Second)
	r1, err := newRW(t, s1, p).ReadLock().Lock(ctx)
	require.NoError(t, err)

	var mu sync.Mutex
	var order []string
	logf := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }

	wgot, werrs := lockAsync(ctx, newRW(t, s2, p).WriteLock())
	waitChildren(t, s1, p, 2)
	r2 := newRW(t, s3, p).ReadLock()
	_, err = r2.TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked, "a reader must not pass a waiting writer")
	rgot, rerrs := make(chan *zklock.Hold, 1), make(chan error, 1)
	go func() {
		h, err := r2.Lock(ctx)
		if err != nil {
			rerrs <- err
			return
		}
		logf("reader acquired")
		rgot <- h
	}()
	waitChildren(t, s1, p, 3)
	notAcquired(t, rgot, rerrs, 200*time.Millisecond, "the reader overtook the waiting writer")

	require.NoError(t, r1.Release())
	wh := waitHold(t, wgot, werrs, "writer")
	logf("writer acquired")
	notAcquired(t, rgot, rerrs, 200*time.Millisecond, "a reader acquired while the writer held")
	logf("writer releasing")
	require.NoError(t, wh.Release())
	rh := waitHold(t, rgot, rerrs, "reader")
	require.NoError(t, rh.Release())
	require.Equal(t, []string{"writer acquired", "writer releasing", "reader acquired"}, order)
}

// A write holder downgrades Curator 5.5's way, and a writer queued behind it
// does not get in while the downgraded read is held.
func TestIntegration_RWDowngrade(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s1, s2, s3 := connect(t, c), connect(t, c), connect(t, c)
	const p = "/locks/rw/downgrade"
	ctx := ctxTimeout(t, 30*time.Second)
	rw := newRW(t, s1, p)
	w1, err := rw.WriteLock().Lock(ctx)
	require.NoError(t, err)

	wgot, werrs := lockAsync(ctx, newRW(t, s2, p).WriteLock())
	waitChildren(t, s1, p, 2)

	inner, cancel := context.WithTimeout(w1.Context(), 10*time.Second) // derived contexts downgrade too
	defer cancel()
	r1, err := rw.ReadLock().TryLock(inner)
	require.NoError(t, err, "a downgrade never waits, not even behind a queued writer")
	wname, rname := path.Base(w1.Node()), path.Base(r1.Node())
	require.Regexp(t, `^_c_[0-9a-f-]{36}-__READ__\d{10}$`, rname)
	require.Equal(t, wname[strings.LastIndex(wname, "__WRIT__")+8:], rname[strings.LastIndex(rname, "__READ__")+8:],
		"the read node reuses the write node's sequence")
	require.Equal(t, w1.Token(), r1.Token(), "the downgraded read keeps the write hold's token")
	rczxid := czxidOf(t, s1, r1.Node())
	require.Greater(t, rczxid, w1.Token())
	ok, stat, err := s1.Conn().Exists(r1.Node())
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, s1.ID(), stat.EphemeralOwner)
	waitChildren(t, s1, p, 3)

	// Reentrant write with the read hold's context (the write hold is
	// still live in it), then release the write side fully.
	w2, err := rw.WriteLock().Lock(r1.Context())
	require.NoError(t, err)
	require.Equal(t, w1.Node(), w2.Node())
	require.NoError(t, w2.Release())
	require.NoError(t, w1.Release())
	waitChildren(t, s1, p, 2)

	notAcquired(t, wgot, werrs, 300*time.Millisecond, "the queued writer overtook the downgraded read (CURATOR-621)")
	_, err = newRW(t, s3, p).WriteLock().TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	// A new reader is behind the queued writer: FIFO.
	_, err = newRW(t, s3, p).ReadLock().TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	ps, err := rw.Participants(ctx)
	require.NoError(t, err)
	require.Len(t, ps, 2)
	require.Equal(t, rname, ps[0].Node)
	require.True(t, ps[0].Holds)
	require.False(t, ps[1].Holds)

	// Now the read holder asks for write: refused, at once.
	_, err = rw.WriteLock().Lock(r1.Context())
	require.ErrorIs(t, err, zklock.ErrUpgrade)

	require.NoError(t, r1.Release())
	w3 := waitHold(t, wgot, werrs, "queued writer")
	require.Greater(t, w3.Token(), r1.Token(), "fencing tokens increase across the downgrade")
	require.Less(t, w3.Token(), rczxid, "the queued writer's node is older than the read node")
	require.NoError(t, w3.Release())
	require.Empty(t, children(t, s1.Conn(), p))
}

// The downgraded read and its write node share a sequence; whichever sorts
// first, each other participant sees the right holder. Many downgrades make
// both orders (the names differ in their random UUIDs) likely.
func TestIntegration_RWDowngradeBothOrders(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	const p = "/locks/rw/pair"
	ctx := ctxTimeout(t, time.Minute)
	rw, other := newRW(t, s1, p), newRW(t, s2, p)
	before := 0
	for range 12 {
		w, err := rw.WriteLock().Lock(ctx)
		require.NoError(t, err)
		r, err := rw.ReadLock().Lock(w.Context())
		require.NoError(t, err)
		cs := children(t, s1.Conn(), p)
		require.Len(t, cs, 2)
		if cs[0] == path.Base(r.Node()) {
			before++
		}
		ps, err := rw.Participants(ctx)
		require.NoError(t, err)
		require.True(t, ps[0].Holds && ps[1].Holds, "%+v", ps)
		ps, err = zklock.Participants(ctx, s2, p) // what `zklock status` shows
		require.NoError(t, err)
		require.True(t, ps[0].Holds && ps[1].Holds, "%+v", ps)
		_, err = other.ReadLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked, "a writer holds")
		require.NoError(t, w.Release())
		// Only the downgraded read is left: another reader shares it,
		// another writer waits.
		r2, err := other.ReadLock().TryLock(ctx)
		require.NoError(t, err)
		_, err = other.WriteLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked)
		require.NoError(t, r2.Release())
		require.NoError(t, r.Release())
	}
	t.Logf("read node sorted first in %d of 12 downgrades", before)
	require.Empty(t, children(t, s1.Conn(), p))
}

func TestIntegration_RWUpgradeRefusedAndReentrancy(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	const p = "/locks/rw/reentrant"
	ctx := ctxTimeout(t, 30*time.Second)
	rw := newRW(t, s, p)

	// Read half: exact count.
	r1, err := rw.ReadLock().Lock(ctx)
	require.NoError(t, err)
	start := time.Now()
	_, err = rw.WriteLock().Lock(r1.Context())
	require.ErrorIs(t, err, zklock.ErrUpgrade)
	_, err = rw.WriteLock().TryLock(r1.Context())
	require.ErrorIs(t, err, zklock.ErrUpgrade)
	require.Less(t, time.Since(start), 5*time.Second, "an upgrade is refused at once")
	require.Len(t, children(t, s.Conn(), p), 1, "a refused upgrade queues nothing")
	r2, err := rw.ReadLock().Lock(r1.Context())
	require.NoError(t, err)
	inner, cancel := context.WithCancel(r2.Context())
	defer cancel()
	r3, err := rw.ReadLock().TryLock(inner)
	require.NoError(t, err)
	require.Equal(t, r1.Node(), r3.Node())
	require.NoError(t, r3.Release())
	require.NoError(t, r2.Release())
	require.Len(t, children(t, s.Conn(), p), 1, "the read node stays until the last release")
	require.NoError(t, r1.Release())
	require.Empty(t, children(t, s.Conn(), p))
	require.ErrorIs(t, r1.Release(), zklock.ErrNotHeld)

	// Write half: exact count.
	w1, err := rw.WriteLock().Lock(ctx)
	require.NoError(t, err)
	w2, err := rw.WriteLock().Lock(w1.Context())
	require.NoError(t, err)
	w3, err := rw.WriteLock().TryLock(w2.Context())
	require.NoError(t, err)
	require.Equal(t, w1.Node(), w3.Node())
	require.Equal(t, w1.Token(), w3.Token())
	// Another owner in this goroutine does not re-enter.
	_, err = rw.WriteLock().TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	require.NoError(t, w3.Release())
	require.NoError(t, w1.Release())
	require.Len(t, children(t, s.Conn(), p), 1, "the write node stays until the last release")
	require.NoError(t, w2.Context().Err())
	require.NoError(t, w2.Release())
	require.Empty(t, children(t, s.Conn(), p))
	require.ErrorIs(t, w2.Err(), zklock.ErrReleased)

	_, err = zklock.NewRWLock(nil, p)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewRWLock(s, "relative")
	require.ErrorIs(t, err, zklock.ErrInvalidPath)
	//lint:ignore SA1012 a nil context is bad input that must be refused
	_, err = rw.ReadLock().Lock(nil) //nolint:staticcheck
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
}
