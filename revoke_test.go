package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// revoked waits for a hold's revocation signal.
func revoked(t *testing.T, h *zklock.Hold) {
	t.Helper()
	select {
	case <-h.Revoked():
	case <-time.After(20 * time.Second):
		t.Fatal("no revocation signal")
	}
}

func notRevoked(t *testing.T, h *zklock.Hold) {
	t.Helper()
	select {
	case <-h.Revoked():
		t.Fatal("revocation signalled, but none was asked")
	default:
	}
}

// A revocable hold stores empty data and sees Revoke; it stays valid until
// its holder releases it. A plain hold has no revocation signal.
func TestIntegration_Revoke(t *testing.T) {
	c := zktest.Start(t)
	holder, other := connect(t, c), connect(t, c)

	plain, err := newMutex(t, holder, "/revoke/plain").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.Nil(t, plain.Revoked())
	require.NoError(t, plain.Release())

	for _, tc := range []struct {
		name string
		lock func(context.Context) (*zklock.Hold, error)
	}{
		{"mutex", newMutex(t, holder, "/revoke/mutex", zklock.WithRevocable(), zklock.WithData([]byte("ignored"))).Lock},
		{"semaphore mutex", newSemMutex(t, holder, "/revoke/semmutex", zklock.WithRevocable()).Lock},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tc.lock(ctxTimeout(t, 10*time.Second))
			require.NoError(t, err)
			data, _, err := other.Conn().Get(h.Node())
			require.NoError(t, err)
			require.Empty(t, data, "a revocable node stores empty data, as Curator's")
			notRevoked(t, h)

			// Data other than __REVOKE__ does not revoke.
			_, err = other.Conn().Set(h.Node(), []byte("hello"), -1)
			require.NoError(t, err)
			require.NoError(t, zklock.Revoke(ctxTimeout(t, 10*time.Second), other, h.Node()))
			revoked(t, h)
			require.NoError(t, h.Err(), "revocation is advisory: the hold stays valid")
			data, _, err = other.Conn().Get(h.Node())
			require.NoError(t, err)
			require.Equal(t, "__REVOKE__", string(data))
			require.NoError(t, h.Release())
			require.NoError(t, zklock.Revoke(ctxTimeout(t, 10*time.Second), other, h.Node()), "a node already gone is not an error")
		})
	}

	t.Run("requested while queued", func(t *testing.T) {
		first, err := newMutex(t, other, "/revoke/queued").Lock(ctxTimeout(t, 10*time.Second))
		require.NoError(t, err)
		got := make(chan *zklock.Hold, 1)
		go func() {
			h, err := newMutex(t, holder, "/revoke/queued", zklock.WithRevocable()).Lock(ctxTimeout(t, 30*time.Second))
			if err == nil {
				got <- h
			}
			close(got)
		}()
		var waiter string
		require.Eventually(t, func() bool {
			cs := children(t, other.Conn(), "/revoke/queued")
			if len(cs) != 2 {
				return false
			}
			for _, n := range cs {
				if "/revoke/queued/"+n != first.Node() {
					waiter = "/revoke/queued/" + n
				}
			}
			return true
		}, 10*time.Second, 5*time.Millisecond)
		require.NoError(t, zklock.Revoke(ctxTimeout(t, 10*time.Second), other, waiter))
		require.NoError(t, first.Release())
		h, ok := <-got
		require.True(t, ok, "the waiter did not acquire")
		revoked(t, h)
		require.NoError(t, h.Release())
	})
}

func TestIntegration_RevokeBadInput(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	require.ErrorIs(t, zklock.Revoke(ctxTimeout(t, time.Second), nil, "/a"), zklock.ErrInvalidArgument)
	require.ErrorIs(t, zklock.Revoke(ctxTimeout(t, time.Second), s, "a/b"), zklock.ErrInvalidPath)
	//nolint:staticcheck // a nil context is the bad input under test
	require.ErrorIs(t, zklock.Revoke(nil, s, "/a"), zklock.ErrInvalidArgument) //lint:ignore SA1012 testing bad input
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, zklock.Revoke(cancelled, s, "/a"), context.Canceled)
}

// Curator's Revoker.attemptRevoke reaches our revocable holder, and our
// Revoke reaches a revocable Curator InterProcessMutex's listener.
func TestIntegration_RevokeCuratorInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		s := connect(t, c)
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)

		t.Run("curator revokes ours", func(t *testing.T) {
			h, err := newMutex(t, s, "/revoke/curator-ours", zklock.WithRevocable()).Lock(ctxTimeout(t, 10*time.Second))
			require.NoError(t, err)
			notRevoked(t, h)
			cur.Must(t, "revoke "+h.Node())
			revoked(t, h)
			require.NoError(t, h.Release())
		})
		t.Run("we revoke curator", func(t *testing.T) {
			cur.Must(t, "mutex R /revoke/curator-theirs")
			cur.Must(t, "revocable R")
			cur.Must(t, "acquire R")
			ev := waitEvent(t, cur, "R", "acquired")
			require.Empty(t, eventsFor(cur, "R"))
			require.NoError(t, zklock.Revoke(ctxTimeout(t, 10*time.Second), s, ev.Arg))
			waitEvent(t, cur, "R", "revoke-requested")
			cur.Must(t, "release R")
		})
	})
}
