package zklock_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// While no server answers, the session tries them again within the first
// second without failing the requests it has not sent yet (go-zookeeper
// alone fails them with ErrNoServer after one pass and then pauses a
// second); past that second it fails them, so that a raw request does not
// wait out a long outage.
func TestIntegration_ReconnectPacing(t *testing.T) {
	c := zktest.Start(t)
	p := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(p.Dialer()), zklock.WithSessionTimeout(20*time.Second))
	t.Cleanup(p.Heal)

	// outage refuses every connection, cuts the open one and sends a raw
	// request once the session knows it is away.
	outage := func() <-chan error {
		p.Refuse(0)
		p.Cut()
		require.Eventually(t, func() bool { return s.State() != zklock.StateConnected }, 10*time.Second, time.Millisecond)
		res := make(chan error, 1)
		go func() {
			_, _, err := s.Conn().Exists("/")
			res <- err
		}()
		return res
	}

	t.Run("short outage", func(t *testing.T) {
		res := outage()
		// Two attempts refused after the request was queued: go-zookeeper
		// alone reports a pass (and fails the request) before each.
		from := p.Accepted()
		require.Eventually(t, func() bool { return p.Accepted() >= from+2 }, 10*time.Second, time.Millisecond)
		p.Heal()
		select {
		case err := <-res:
			require.NoError(t, err, "the request failed instead of waiting for the server")
		case <-time.After(30 * time.Second):
			t.Fatal("the request did not end after the server came back")
		}
	})

	require.NoError(t, s.WaitConnected(ctxTimeout(t, 30*time.Second)))

	t.Run("long outage", func(t *testing.T) {
		res := outage()
		select {
		case err := <-res:
			require.ErrorIs(t, err, zk.ErrNoServer)
		case <-time.After(30 * time.Second):
			t.Fatal("a raw request waited out the outage")
		}
		p.Heal()
		require.NoError(t, s.WaitConnected(ctxTimeout(t, 30*time.Second)))
	})

	_, _, err := s.Conn().Exists("/")
	require.NoError(t, err)
}
