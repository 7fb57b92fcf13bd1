package zktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestIntegration_ExampleService is the README's example for the process
// backend: a service's lock when its session is expired by the server.
func TestIntegration_ExampleService(t *testing.T) {
	c := zktest.Start(t) // a java process on 127.0.0.1 (StartEnsemble: 3), stopped in t.Cleanup
	sess, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(4*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	m, err := zklock.NewMutex(sess, "/locks/orders")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hold, err := m.Lock(ctx)
	require.NoError(t, err)

	require.NoError(t, c.Expire(hold.SessionID())) // the servers end the session now
	select {
	case <-hold.Done(): // the service must stop acting on the lock's behalf
		require.ErrorIs(t, hold.Err(), zklock.ErrSessionExpired)
	case <-time.After(10 * time.Second):
		t.Fatal("the hold was not reported lost")
	}
	hold, err = m.Lock(ctx) // a new session, a new hold
	require.NoError(t, err)
	require.NoError(t, hold.Release())
}
