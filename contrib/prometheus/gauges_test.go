package zklockprom_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	zklockprom "github.com/zklock/zklock/contrib/prometheus"
	"github.com/zklock/zklock/zktest"
)

// The held and waiting gauges follow the holds and waits of a real
// ZooKeeper, and each failed acquire counts once under its reason.
func TestIntegration_HeldWaitingFailures(t *testing.T) {
	c := zktest.Start(t)
	m := zklockprom.New()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session := func(opts ...zklock.SessionOption) *zklock.Session {
		s, err := zklock.Connect(c.Servers(), append(opts, zklock.WithDialer(c.Dialer()))...)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		require.NoError(t, s.WaitConnected(ctx))
		return s
	}
	other, s := session(), session(m.SessionOption())
	const path = "/locks/gauges"
	mine, err := zklock.NewMutex(s, path)
	require.NoError(t, err)
	theirs, err := zklock.NewMutex(other, path)
	require.NoError(t, err)
	gauge := func(name string) float64 { return value(t, reg, name, nil) }
	failures := func(reason string) float64 {
		return value(t, reg, "zklock_acquire_failures_total", map[string]string{"reason": reason})
	}

	held, err := theirs.Lock(ctx)
	require.NoError(t, err)
	_, err = mine.TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	assert.Equal(t, 1.0, failures("locked"))
	assert.Equal(t, 0.0, gauge("zklock_waiting"))

	got := make(chan *zklock.Hold, 1)
	go func() {
		h, err := mine.Lock(ctx)
		if err != nil {
			h = nil
		}
		got <- h
	}()
	require.Eventually(t, func() bool { return gauge("zklock_waiting") == 1 }, 10*time.Second, 5*time.Millisecond)
	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = mine.Lock(short)
	stop()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1.0, failures("timeout"))
	assert.Equal(t, 1.0, gauge("zklock_waiting"), "the timed-out acquire no longer waits")
	assert.Equal(t, 0.0, gauge("zklock_held"))

	require.NoError(t, held.Release())
	h := <-got
	require.NotNil(t, h)
	assert.Equal(t, 0.0, gauge("zklock_waiting"))
	assert.Equal(t, 1.0, gauge("zklock_held"))
	require.NoError(t, h.Release())
	assert.Equal(t, 0.0, gauge("zklock_held"))
	assert.Equal(t, 1.0, value(t, reg, "zklock_acquisitions_total", nil))
}

// Events fed by hand, without acquire numbers, move the held gauge and
// never make a gauge negative; events with numbers move each gauge once.
func TestGaugesByHand(t *testing.T) {
	m := zklockprom.New()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	observe := m.Observer()
	observe(zklock.Event{Kind: zklock.EventAcquired, Path: "/l"})
	assert.Equal(t, 1.0, value(t, reg, "zklock_held", nil))
	observe(zklock.Event{Kind: zklock.EventReleased, Path: "/l"})
	assert.Equal(t, 0.0, value(t, reg, "zklock_held", nil))

	observe(zklock.Event{Kind: zklock.EventAcquiring, Acquire: 7, Path: "/l"})
	observe(zklock.Event{Kind: zklock.EventAcquiring, Acquire: 8, Path: "/l"})
	assert.Equal(t, 2.0, value(t, reg, "zklock_waiting", nil))
	observe(zklock.Event{Kind: zklock.EventAcquired, Acquire: 7, Path: "/l"})
	observe(zklock.Event{Kind: zklock.EventAcquireFailed, Acquire: 8, Path: "/l", Err: zklock.ErrSessionExpired})
	observe(zklock.Event{Kind: zklock.EventAcquireFailed, Acquire: 8, Path: "/l", Err: zklock.ErrSessionExpired})
	assert.Equal(t, 0.0, value(t, reg, "zklock_waiting", nil))
	assert.Equal(t, 1.0, value(t, reg, "zklock_held", nil))
	observe(zklock.Event{Kind: zklock.EventLost, Acquire: 7, Path: "/l", Err: fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrClosed)})
	observe(zklock.Event{Kind: zklock.EventLost, Acquire: 7, Path: "/l", Err: fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrClosed)})
	assert.Equal(t, 0.0, value(t, reg, "zklock_held", nil))
	assert.Equal(t, 2.0, value(t, reg, "zklock_acquire_failures_total", map[string]string{"reason": "expired"}))
}

func TestReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{zklock.ErrLocked, zklockprom.ReasonLocked},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), zklockprom.ReasonTimeout},
		{context.Canceled, zklockprom.ReasonCanceled},
		{zklock.ErrSessionExpired, zklockprom.ReasonExpired},
		{zklock.ErrClosed, zklockprom.ReasonClosed},
		{fmt.Errorf("%w: %w", zklock.ErrUnreachable, context.DeadlineExceeded), zklockprom.ReasonUnreachable},
		{errors.New("zk: not authenticated"), zklockprom.ReasonOther},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, zklockprom.Reason(tt.err), "%v", tt.err)
	}
}
