package zktest_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
	"github.com/zklock/zklock/zktest"
)

func TestIntegration_ProxyBlackholeHeal(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	states := newStates()
	// 8s: the client notices silence after 2/3 of it, which leaves the
	// server a third of it before it would expire the session.
	conn := p.Connect(t, 8*time.Second, states.option())
	sid := conn.SessionID()
	held := testRoot(t, conn) + "/held"
	_, err := conn.Create(held, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	p.Blackhole()
	states.wait(t, zk.StateDisconnected, 20*time.Second)

	// New connections are accepted but never answered while blackholed.
	raw, err := net.Dial("tcp", p.Addrs()[0])
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, wire.WriteFrame(raw, wire.EncodeConnectRequest(wire.ConnectRequest{TimeoutMs: 4000})))
	require.NoError(t, raw.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, err = wire.ReadFrame(raw, wire.DefaultMaxFrame)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "blackholed proxy answered: %v", err)

	p.Heal()
	states.wait(t, zk.StateHasSession, 20*time.Second)
	require.Equal(t, sid, conn.SessionID(), "session changed across the partition")
	ok, _, err := conn.Exists(held)
	require.NoError(t, err)
	require.True(t, ok)

	// The held handshake is delivered after Heal.
	require.NoError(t, raw.SetReadDeadline(time.Now().Add(10*time.Second)))
	f, err := wire.ReadFrame(raw, wire.DefaultMaxFrame)
	require.NoError(t, err)
	_, rawSID, _, err := wire.ParseConnectResponse(f)
	require.NoError(t, err)
	require.NotZero(t, rawSID)

	// Cut closes live connections; the client reconnects, same session.
	p.Cut()
	states.wait(t, zk.StateDisconnected, 10*time.Second)
	states.wait(t, zk.StateHasSession, 10*time.Second)
	require.Equal(t, sid, conn.SessionID())
}

func TestIntegration_ProxyDropNextCreateReply(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	conn := p.Connect(t, 8*time.Second)
	check := c.Connect(t, 8*time.Second)
	root := testRoot(t, check)

	p.DropNextCreateReply()
	_, err := conn.Create(root+"/ghost", []byte("g"), 0, zk.WorldACL(zk.PermAll))
	require.Error(t, err, "Create reported success although its reply was dropped")
	data, _, err := check.Get(root + "/ghost")
	require.NoError(t, err, "the server did not apply the create")
	require.Equal(t, "g", string(data))

	// One shot: the client reconnects and the next create is answered.
	require.Eventually(t, func() bool {
		_, err = conn.Create(root+"/after", nil, 0, zk.WorldACL(zk.PermAll))
		return !errors.Is(err, zk.ErrNoServer) && !errors.Is(err, zk.ErrConnectionClosed)
	}, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, err)
}

func TestIntegration_ProxyRequests(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	// A client given the listeners directly (as Curator or kazoo would be).
	conn := c.ConnectTo(t, p.Addrs(), 8*time.Second)
	require.Equal(t, 1, p.Requests()[wire.OpCreateSession])

	root := testRoot(t, conn)
	p.ResetCounts()
	require.Empty(t, p.Requests())
	for _, path := range []string{"/r1", "/r2", "/r3"} {
		_, err := conn.Create(root+path, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	_, _, err := conn.Get(root + "/r1")
	require.NoError(t, err)
	_, _, err = conn.Children(root)
	require.NoError(t, err)
	got := p.Requests()
	require.Equal(t, 3, got[wire.OpCreate])
	require.Equal(t, 1, got[wire.OpGetData])
	require.Equal(t, 1, got[wire.OpGetChildren2]+got[wire.OpGetChildren])
	// Sessions made through the listeners are recorded for Expire too.
	_, known := c.SessionTimeout(conn.SessionID())
	require.True(t, known)

	// The proxy dialer refuses addresses outside the cluster.
	_, err = p.Dialer()("tcp", "127.0.0.1:1", time.Second)
	require.Error(t, err)
}
