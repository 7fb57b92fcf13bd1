package zklock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

func waitEvent(t *testing.T, p *peers.Peer, name, kind string) peers.Event {
	t.Helper()
	ev, err := p.WaitEvent(ctxTimeout(t, 30*time.Second), name, kind)
	require.NoError(t, err)
	return ev
}

// Our Mutex and Curator's InterProcessMutex on one path exclude each other,
// both ways.
func TestIntegration_CuratorMutexInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		s := connect(t, c)
		m := newMutex(t, s, "/locks/curator")
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)
		cur.Must(t, "mutex A /locks/curator")

		// Curator holds: we wait, and hold only after it releases.
		cur.Must(t, "acquire A")
		ev := waitEvent(t, cur, "A", "acquired")
		require.Regexp(t, `^/locks/curator/_c_[0-9a-f-]{36}-lock-\d{10}$`, ev.Arg)
		_, err := m.TryLock(ctxTimeout(t, 10*time.Second))
		require.ErrorIs(t, err, zklock.ErrLocked)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		_, err = m.Lock(ctx)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, "we must wait while Curator holds")

		got := make(chan *zklock.Hold, 1)
		errs := make(chan error, 1)
		go func() {
			h, err := m.Lock(ctxTimeout(t, 30*time.Second))
			if err != nil {
				errs <- err
				return
			}
			got <- h
		}()
		require.Eventually(t, func() bool { return len(children(t, s.Conn(), "/locks/curator")) == 2 }, 10*time.Second, 5*time.Millisecond)
		select {
		case <-got:
			t.Fatal("acquired while Curator held the lock")
		default:
		}
		cur.Must(t, "release A")
		var h *zklock.Hold
		select {
		case h = <-got:
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatal("no acquire after Curator released")
		}

		// We hold: Curator waits (and gives up after its timeout), then gets it.
		cur.Must(t, "acquire A 500")
		waitEvent(t, cur, "A", "timeout")
		cur.Must(t, "acquire A")
		require.Eventually(t, func() bool { return len(children(t, s.Conn(), "/locks/curator")) == 2 }, 10*time.Second, 5*time.Millisecond)
		require.Empty(t, eventsFor(cur, "A"), "Curator acquired while we held the lock")
		require.NoError(t, h.Release())
		waitEvent(t, cur, "A", "acquired")
		cur.Must(t, "release A")
	})
}

func eventsFor(p *peers.Peer, name string) []peers.Event {
	var out []peers.Event
	for _, ev := range p.Buffered() {
		if ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

// A default kazoo Lock makes us wait (its __lock__ nodes count as
// contenders), and a kazoo Lock with extra_lock_patterns=["-lock-"] waits for
// us.
func TestIntegration_KazooMutexInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		s := connect(t, c)
		m := newMutex(t, s, "/locks/kazoo")
		kz := g.Kazoo(t, c.ConnectString(), 10*time.Second)

		kz.Must(t, "lock K /locks/kazoo -")
		kz.Must(t, "acquire K")
		ev := waitEvent(t, kz, "K", "acquired")
		require.Regexp(t, `/locks/kazoo/[0-9a-f]{32}__lock__\d{10}$`, ev.Arg)
		_, err := m.TryLock(ctxTimeout(t, 10*time.Second))
		require.ErrorIs(t, err, zklock.ErrLocked, "a kazoo holder must make us wait")
		got := make(chan error, 1)
		var h *zklock.Hold
		go func() {
			var err error
			h, err = m.Lock(ctxTimeout(t, 30*time.Second))
			got <- err
		}()
		require.Eventually(t, func() bool { return len(children(t, s.Conn(), "/locks/kazoo")) == 2 }, 10*time.Second, 5*time.Millisecond)
		select {
		case <-got:
			t.Fatal("acquired while kazoo held the lock")
		default:
		}
		kz.Must(t, "release K")
		require.NoError(t, <-got)

		kz.Must(t, "lock X /locks/kazoo -lock-")
		kz.Must(t, "acquire X 500")
		waitEvent(t, kz, "X", "timeout")
		kz.Must(t, "acquire X")
		require.Eventually(t, func() bool {
			for _, name := range children(t, s.Conn(), "/locks/kazoo") {
				if strings.Contains(name, "__lock__") {
					return true
				}
			}
			return false
		}, 10*time.Second, 5*time.Millisecond)
		require.Empty(t, eventsFor(kz, "X"), "kazoo with -lock- acquired while we held the lock")
		require.NoError(t, h.Release())
		waitEvent(t, kz, "X", "acquired")
		kz.Must(t, "release X")
	})
}
