package zklock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// Our RWLock and Curator's InterProcessReadWriteLock on one path are one
// lock: a Curator writer excludes our readers and writers, our writer
// excludes Curator's readers and writers, and readers of both share.
func TestIntegration_CuratorRWLockInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		s1, s2 := connect(t, c), connect(t, c)
		const p = "/locks/rw/curator"
		ctx := ctxTimeout(t, time.Minute)
		ours1, ours2 := newRW(t, s1, p), newRW(t, s2, p)
		curW := g.Curator(t, c.ConnectString(), 10*time.Second)
		curR := g.Curator(t, c.ConnectString(), 10*time.Second)
		curW.Must(t, "rwwrite W "+p)
		curR.Must(t, "rwread R "+p)

		// A Curator writer holds: our reader and writer wait, in queue order.
		curW.Must(t, "acquire W")
		ev := waitEvent(t, curW, "W", "acquired")
		require.Regexp(t, `^`+p+`/_c_[0-9a-f-]{36}-__WRIT__\d{10}$`, ev.Arg)
		_, err := ours1.ReadLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked)
		_, err = ours2.WriteLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked)
		rgot, rerrs := lockAsync(ctx, ours1.ReadLock())
		waitChildren(t, s1, p, 2)
		wgot, werrs := lockAsync(ctx, ours2.WriteLock())
		waitChildren(t, s1, p, 3)
		notAcquired(t, rgot, rerrs, 200*time.Millisecond, "our reader acquired while a Curator writer held")
		notAcquired(t, wgot, werrs, 0, "our writer acquired while a Curator writer held")
		curW.Must(t, "release W")
		r := waitHold(t, rgot, rerrs, "our reader")
		notAcquired(t, wgot, werrs, 200*time.Millisecond, "our writer acquired while our reader held")
		require.NoError(t, r.Release())
		w := waitHold(t, wgot, werrs, "our writer")

		// Our writer holds: Curator's reader and writer wait.
		curR.Must(t, "acquire R 300")
		waitEvent(t, curR, "R", "timeout")
		curW.Must(t, "acquire W 300")
		waitEvent(t, curW, "W", "timeout")
		curR.Must(t, "acquire R")
		waitChildren(t, s1, p, 2)
		require.Never(t, func() bool { return len(eventsFor(curR, "R")) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
			"a Curator reader acquired while our writer held")
		require.NoError(t, w.Release())
		ev = waitEvent(t, curR, "R", "acquired")
		require.Regexp(t, `^`+p+`/_c_[0-9a-f-]{36}-__READ__\d{10}$`, ev.Arg)

		// A Curator reader holds: our reader shares; writers of both wait.
		r, err = ours1.ReadLock().TryLock(ctx)
		require.NoError(t, err, "our reader must share with a Curator reader")
		_, err = ours2.WriteLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked)
		curW.Must(t, "acquire W 300")
		waitEvent(t, curW, "W", "timeout")
		curR.Must(t, "release R")

		// Our reader holds: a Curator reader shares.
		curR.Must(t, "acquire R 10000")
		waitEvent(t, curR, "R", "acquired")
		require.NoError(t, r.Err())
		curR.Must(t, "release R")
		require.NoError(t, r.Release())
		require.Empty(t, children(t, s1.Conn(), p))
	})
}

// kazoo's write nodes (__lock__) count as writers and its read nodes
// (__rlock__) as readers.
func TestIntegration_KazooRWNodesCount(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		s := connect(t, c)
		const p = "/locks/rw/kazoo"
		ctx := ctxTimeout(t, 30*time.Second)
		rw := newRW(t, s, p)
		kz := g.Kazoo(t, c.ConnectString(), 10*time.Second)

		kz.Must(t, "writelock W "+p+" -")
		kz.Must(t, "acquire W")
		require.Regexp(t, `/[0-9a-f]{32}__lock__\d{10}$`, waitEvent(t, kz, "W", "acquired").Arg)
		_, err := rw.ReadLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked, "a kazoo writer must exclude our readers")
		got, errs := lockAsync(ctx, rw.ReadLock())
		waitChildren(t, s, p, 2)
		notAcquired(t, got, errs, 200*time.Millisecond, "our reader acquired while a kazoo writer held")
		kz.Must(t, "release W")
		r := waitHold(t, got, errs, "our reader")
		require.NoError(t, r.Release())

		kz.Must(t, "readlock R "+p+" -")
		kz.Must(t, "acquire R")
		require.Regexp(t, `/[0-9a-f]{32}__rlock__\d{10}$`, waitEvent(t, kz, "R", "acquired").Arg)
		r, err = rw.ReadLock().TryLock(ctx)
		require.NoError(t, err, "our reader shares with a kazoo reader")
		require.NoError(t, r.Release())
		_, err = rw.WriteLock().TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked, "a kazoo reader must exclude our writers")
		kz.Must(t, "release R")
		w, err := rw.WriteLock().TryLock(ctx)
		require.NoError(t, err)
		require.NoError(t, w.Release())
	})
}

// kazoo sees our read-write nodes when told their names: a kazoo ReadLock
// with extra_lock_patterns ["__WRIT__"] waits for our writer, a WriteLock
// with ["__READ__", "__WRIT__"] for our reader, with kazoo 2.8 and with
// kazoo 2.9 and later (whose ReadLock no longer waits for writers queued
// behind it, kazoo#649).
func TestIntegration_KazooRWSeesOurs(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		s := connect(t, c)
		const p = "/locks/rw/kazoo-sees"
		ctx := ctxTimeout(t, 30*time.Second)
		rw := newRW(t, s, p)
		kz := g.Kazoo(t, c.ConnectString(), 10*time.Second)

		w, err := rw.WriteLock().Lock(ctx)
		require.NoError(t, err)
		kz.Must(t, "readlock R "+p+" __WRIT__")
		kz.Must(t, "acquire R 300")
		waitEvent(t, kz, "R", "timeout")
		kz.Must(t, "acquire R")
		waitChildren(t, s, p, 2)
		require.NoError(t, w.Release())
		waitEvent(t, kz, "R", "acquired")
		r, err := rw.ReadLock().TryLock(ctx)
		require.NoError(t, err, "readers share")
		kz.Must(t, "release R")

		kz.Must(t, "writelock W "+p+" __READ__,__WRIT__")
		kz.Must(t, "acquire W 300")
		waitEvent(t, kz, "W", "timeout")
		kz.Must(t, "acquire W")
		waitChildren(t, s, p, 2)
		require.NoError(t, r.Release())
		waitEvent(t, kz, "W", "acquired")
		kz.Must(t, "release W")
	})
}
