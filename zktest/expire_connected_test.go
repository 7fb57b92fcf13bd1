package zktest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// A session's id is there to expire once WaitConnected returns, and
// Expire ends that session on the server (the session then has a new id).
func TestIntegration_ExpireConnectedSession(t *testing.T) {
	c := zktest.Start(t) // or zktest.StartEnsemble(t) for 3 servers
	sess, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()))
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	require.NoError(t, sess.WaitConnected(t.Context())) // the session has its id once connected
	require.NoError(t, c.Expire(sess.ID()))             // the server expires the session now

	expired := sess.ID()
	require.NotZero(t, expired)
	require.Eventually(t, func() bool { id := sess.ID(); return id != 0 && id != expired },
		20*time.Second, 10*time.Millisecond, "the session was not expired (no new session id)")
}
