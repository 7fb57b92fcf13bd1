package containers_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest/containers"
)

// TestIntegration_ExampleService is the README's example for the
// containers backend: a service's lock under a partition that cuts a
// follower away, then under the loss of the leader.
func TestIntegration_ExampleService(t *testing.T) {
	c := containers.StartEnsemble(t) // 3 members, one container each, removed in t.Cleanup
	sess, err := zklock.Connect(c.Servers(), zklock.WithSessionTimeout(6*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	m, err := zklock.NewMutex(sess, "/locks/orders")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// A follower is cut off from the other members and from us: the
	// majority (and the lock) carries on.
	leader, err := c.Leader()
	require.NoError(t, err)
	f := (leader + 1) % 3
	require.NoError(t, c.Partition([]int{leader, 3 - leader - f, containers.Host}, []int{f}))
	hold, err := m.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, hold.Release())
	require.NoError(t, c.Heal())
	require.NoError(t, c.WaitServing(ctx))

	// The leader dies while we hold the lock: the hold is kept (the same
	// node and token) or reported lost on hold.Done(), never lost silently.
	hold, err = m.Lock(ctx)
	require.NoError(t, err)
	token := hold.Token()
	require.NoError(t, c.Kill(leader))
	require.Eventually(t, func() bool { l, err := c.Leader(); return err == nil && l != leader }, 30*time.Second, 100*time.Millisecond)
	select {
	case <-hold.Done():
		t.Logf("lost, as the policy allows: %v", hold.Err())
	case <-time.After(3 * time.Second):
		require.Equal(t, token, hold.Token())
		require.NoError(t, hold.Release())
	}
}
