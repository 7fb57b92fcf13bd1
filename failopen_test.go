package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// An acquire started while ZooKeeper is down succeeds once it is back, with
// exactly one node of ours: every retry is a protected create. The single
// server's restart can leave a connection unanswered (ZOOKEEPER-5051): the
// session leaves it after a third of its timeout and tries again.
func TestIntegration_AcquireRidesOutAnOutage(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c, zklock.WithSessionTimeout(20*time.Second))
	m := newMutex(t, s, "/locks/outage")
	require.NoError(t, c.Stop(0))

	type result struct {
		h   *zklock.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := m.Lock(ctxTimeout(t, time.Minute))
		done <- result{h, err}
	}()
	require.Eventually(t, func() bool { return s.State() == zklock.StateSuspended }, 20*time.Second, 5*time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("acquired or failed while ZooKeeper was down: %v", r.err)
	default:
	}
	require.NoError(t, c.Start(0))
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, []string{r.h.Node()[len("/locks/outage/"):]}, children(t, s.Conn(), "/locks/outage"))
	require.NoError(t, r.h.Release())
}

func TestIntegration_UnreachablePastTheDeadline(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	p := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(p.Dialer()))
	p.Blackhole()
	t.Cleanup(p.Heal)

	// Default: fail closed, with an error that says why.
	_, err := newMutex(t, s, "/locks/unreachable").Lock(ctxTimeout(t, 3*sessionTimeout))
	require.ErrorIs(t, err, zklock.ErrUnreachable)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Fail-open: a non-exclusive hold, flagged by its error, well before
	// the context's deadline.
	m := newMutex(t, s, "/locks/unreachable", zklock.WithFailOpen(300*time.Millisecond))
	start := time.Now()
	h, err := m.Lock(ctxTimeout(t, time.Minute))
	require.ErrorIs(t, err, zklock.ErrUnlocked)
	require.Less(t, time.Since(start), 30*time.Second)
	require.NotNil(t, h)
	require.False(t, h.Exclusive())
	require.Zero(t, h.Token())
	require.Empty(t, h.Node())
	require.NoError(t, h.Err())
	require.NoError(t, h.Release())
	require.ErrorIs(t, h.Release(), zklock.ErrNotHeld)

	// Once ZooKeeper answers again, the same lock is exclusive again.
	p.Heal()
	p.Cut() // connections opened during the blackhole would wait for their handshake
	require.NoError(t, s.WaitConnected(ctxTimeout(t, time.Minute)))
	h, err = m.Lock(ctxTimeout(t, 30*time.Second))
	require.NoError(t, err)
	require.True(t, h.Exclusive())
	require.Positive(t, h.Token())
	require.NoError(t, h.Release())
}

// WithFailOpen never applies to a lock that is merely busy.
func TestIntegration_FailOpenWaitsForABusyLock(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := connect(t, c)
	holder, err := newMutex(t, s, "/locks/busy").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
	defer cancel()
	h, err := newMutex(t, s, "/locks/busy", zklock.WithFailOpen(100*time.Millisecond)).Lock(ctx)
	require.Nil(t, h)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.False(t, errors.Is(err, zklock.ErrUnlocked) || errors.Is(err, zklock.ErrUnreachable), "%v", err)
	require.NoError(t, holder.Release())
}
