package zklockprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	zklockprom "github.com/zklock/zklock/contrib/prometheus"
	"github.com/zklock/zklock/zktest"
)

// The metrics an SRE alerts on, moved by a real ZooKeeper: the leader gauge
// per election path (an election's and a latch's), resigned and revoked
// leaderships named as loss causes, the recipe label, an expiry counted
// among the session's state changes, and a requeued campaign's retry.
func TestIntegration_OperationsMetrics(t *testing.T) {
	c := zktest.Start(t)
	m := zklockprom.New()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func() *zklock.Session {
		s, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(4*time.Second),
			zklock.WithLossLimit(0), m.SessionOption())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		require.NoError(t, s.WaitConnected(ctx))
		return s
	}
	eventually := func(name string, labels map[string]string, want float64) {
		t.Helper()
		require.Eventually(t, func() bool { return value(t, reg, name, labels) == want }, 20*time.Second, 5*time.Millisecond,
			"%s%v: %v, want %v", name, labels, value(t, reg, name, labels), want)
	}
	s1, s2 := connect(), connect()
	leader := func(path, recipe string) map[string]string { return map[string]string{"path": path, "recipe": recipe} }

	// An election's term, resigned; a second participant waits meanwhile
	// with WithRequeue, and its session expires: a retry.
	e1, err := zklock.NewLeaderElection(s1, "/elections/ops", "one")
	require.NoError(t, err)
	e2, err := zklock.NewLeaderElection(s2, "/elections/ops", "two", zklock.WithRequeue())
	require.NoError(t, err)
	resign := make(chan struct{})
	ran := make(chan error, 1)
	go func() {
		ran <- e1.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
			<-resign
			l.Resign()
			return nil
		})
	}()
	eventually("zklock_leader", leader("/elections/ops", "election"), 1)
	eventually("zklock_held", map[string]string{"recipe": "election"}, 1)
	ctx2, stop2 := context.WithCancel(ctx)
	ran2 := make(chan error, 1)
	go func() {
		ran2 <- e2.Run(ctx2, func(ctx context.Context, _ *zklock.Leadership) error { <-ctx.Done(); return nil })
	}()
	require.Eventually(t, func() bool { ps, _ := e1.Participants(ctx); return len(ps) == 2 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Expire(s2.ID()))
	eventually("zklock_session_state_changes_total", map[string]string{"state": "expired"}, 1)
	eventually("zklock_acquire_retries_total", map[string]string{"recipe": "election"}, 1)
	stop2()
	<-ran2

	close(resign)
	require.NoError(t, <-ran)
	eventually("zklock_leader", leader("/elections/ops", "election"), 0)
	eventually("zklock_losses_total", map[string]string{"cause": "resigned", "recipe": "election"}, 1)

	// A revocable election's term, revoked by another.
	re, err := zklock.NewLeaderElection(s1, "/elections/ops-revoked", "one", zklock.WithRevocable())
	require.NoError(t, err)
	require.NoError(t, re.Run(ctx, func(term context.Context, l *zklock.Leadership) error {
		// Not the term's context: the revocation ends the term, maybe
		// before Revoke's own reply is read.
		require.NoError(t, zklock.Revoke(ctx, s2, l.Hold().Node()))
		<-term.Done()
		return nil
	}))
	eventually("zklock_losses_total", map[string]string{"cause": "revoked", "recipe": "election"}, 1)

	// A latch leads, loses its term to an expiry, and leads again.
	l, err := zklock.NewLeaderLatch(s1, "/latch/ops", "one")
	require.NoError(t, err)
	require.NoError(t, l.Start(ctx))
	t.Cleanup(func() { _ = l.Close() })
	eventually("zklock_leader", leader("/latch/ops", "latch"), 1)
	term, err := l.Await(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Expire(s1.ID()))
	<-term.Done()
	require.Eventually(t, func() bool { // suspended past the loss limit (0), or expired: whichever it heard first
		return value(t, reg, "zklock_losses_total", map[string]string{"cause": "expired", "recipe": "latch"})+
			value(t, reg, "zklock_losses_total", map[string]string{"cause": "suspended", "recipe": "latch"}) == 1
	}, 20*time.Second, 5*time.Millisecond, "the latch's lost term")
	eventually("zklock_session_state_changes_total", map[string]string{"state": "expired"}, 2)
	_, err = l.Await(ctx)
	require.NoError(t, err)
	eventually("zklock_leader", leader("/latch/ops", "latch"), 1)
	require.NoError(t, l.Close())
	eventually("zklock_leader", leader("/latch/ops", "latch"), 0)
	require.Zero(t, value(t, reg, "zklock_losses_total", map[string]string{"cause": "other"}))
}
