package zktest_test

import (
	"errors"
	"io"
	"net"
	"slices"
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

	// Then: f runs as the create passes, before the server has it.
	type seen struct {
		member  int
		existed bool
		err     error
	}
	got := make(chan seen, 1)
	p.DropNextCreateReplyThen(func(member int) {
		ok, _, err := check.Exists(root + "/then")
		got <- seen{member, ok, err}
	})
	_, err = conn.Create(root+"/then", nil, 0, zk.WorldACL(zk.PermAll))
	require.Error(t, err)
	require.Equal(t, seen{0, false, nil}, <-got)
	ok, _, err := check.Exists(root + "/then")
	require.NoError(t, err)
	require.True(t, ok, "the create was forwarded after f")
}

// Refuse closes new connections at once and leaves open ones alone.
func TestIntegration_ProxyRefuse(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	states := newStates()
	conn := p.Connect(t, 8*time.Second, states.option())
	root := testRoot(t, conn)

	p.Refuse(0, 7) // 7: out of range, ignored
	_, _, err := conn.Exists(root)
	require.NoError(t, err, "an open connection is left alone")
	raw, err := net.Dial("tcp", p.Addrs()[0])
	require.NoError(t, err)
	defer raw.Close()
	require.NoError(t, raw.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = raw.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "a new connection is closed at once")

	p.Cut()
	states.wait(t, zk.StateDisconnected, 10*time.Second)
	p.Heal()
	states.wait(t, zk.StateHasSession, 10*time.Second)
	_, _, err = conn.Exists(root)
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

// rtts returns the fastest and the median of n Exists round trips on conn.
func rtts(t *testing.T, conn *zk.Conn, n int) (fastest, median time.Duration) {
	t.Helper()
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		_, _, err := conn.Exists("/")
		require.NoError(t, err)
		ds[i] = time.Since(t0)
	}
	slices.Sort(ds)
	return ds[0], ds[n/2]
}

func TestIntegration_ProxyDelay(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	conn := p.Connect(t, 8*time.Second)
	_, base := rtts(t, conn, 21)
	// Slack for a loaded machine: far less than a second delay.
	const slack = 30 * time.Millisecond

	for _, d := range []struct{ toServer, toClient time.Duration }{
		{20 * time.Millisecond, 30 * time.Millisecond}, // both directions count, once each
		{0, 40 * time.Millisecond},                     // one direction only
		{15 * time.Millisecond, 0},
		{250 * time.Microsecond, 250 * time.Microsecond}, // what the benchmarks' 0.5 ms round trip uses
	} {
		p.SetDelay(d.toServer, d.toClient)
		fastest, median := rtts(t, conn, 11)
		t.Logf("delay %v+%v: round trip fastest %v, median %v (%v without delay)", d.toServer, d.toClient, fastest, median, base)
		require.GreaterOrEqual(t, fastest, d.toServer+d.toClient, "a round trip beat the delay")
		require.Less(t, median, d.toServer+d.toClient+base+slack, "the delay was applied more than once")
	}

	p.SetDelay(-time.Second, 0) // negative counts as zero
	_, median := rtts(t, conn, 11)
	require.Less(t, median, base+slack)
}

// rawExists sends Exists("/") requests with xids from..to-1 on raw, all at once.
func rawExists(t *testing.T, raw net.Conn, from, to int32) {
	t.Helper()
	var b []byte
	for xid := from; xid < to; xid++ {
		req := wire.AppendRequestHeader(nil, wire.RequestHeader{Xid: xid, Type: wire.OpExists})
		req = append(req, 0, 0, 0, 1, '/', 0) // path "/", no watch
		b = wire.AppendFrame(b, req)
	}
	_, err := raw.Write(b)
	require.NoError(t, err)
}

// rawSession opens a session through p's first listener on a bare
// connection, to write requests by hand; it is closed in cleanup.
func rawSession(t *testing.T, p *zktest.Proxy) net.Conn {
	t.Helper()
	raw, err := net.Dial("tcp", p.Addrs()[0])
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	require.NoError(t, raw.SetDeadline(time.Now().Add(20*time.Second)))
	require.NoError(t, wire.WriteFrame(raw, wire.EncodeConnectRequest(wire.ConnectRequest{TimeoutMs: 4000})))
	_, err = wire.ReadFrame(raw, wire.DefaultMaxFrame)
	require.NoError(t, err)
	return raw
}

func TestIntegration_ProxyDelayKeepsOrder(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	raw := rawSession(t, p)

	readReplies := func(from, to int32) (first time.Time) {
		t.Helper()
		for want := from; want < to; want++ {
			f, err := wire.ReadFrame(raw, wire.DefaultMaxFrame)
			require.NoError(t, err)
			if want == from {
				first = time.Now()
			}
			h, err := wire.ParseReplyHeader(f)
			require.NoError(t, err)
			require.Equal(t, want, h.Xid, "reply out of order")
			require.Zero(t, h.Err)
		}
		return first
	}

	// A steady delay: pipelined requests are delayed together.
	const n = 50
	p.SetDelay(10*time.Millisecond, 0)
	t0 := time.Now()
	rawExists(t, raw, 1, 1+n)
	first := readReplies(1, 1+n)
	require.GreaterOrEqual(t, first.Sub(t0), 10*time.Millisecond, "first reply came before its delay")
	require.Less(t, time.Since(t0), 10*time.Millisecond+time.Second, "requests were delayed one after the other")

	// Frames read under a long delay, then more under none: the later ones
	// are due first but must not overtake, in either direction.
	const long = 300 * time.Millisecond
	for i, d := range []struct{ toServer, toClient time.Duration }{{long, 0}, {0, long}} {
		from := int32(1 + n + 2*n*i)
		p.SetDelay(d.toServer, d.toClient)
		t0 = time.Now()
		rawExists(t, raw, from, from+n)
		// Held counts frames read and not yet forwarded; a request is
		// counted in Requests once forwarded.
		sent := int(from - 1)
		if d.toClient > 0 {
			sent += n
		}
		require.Eventually(t, func() bool { return p.Held() == n && p.Requests()[wire.OpExists] == sent },
			10*time.Second, time.Millisecond/2, "the proxy did not hold the frames")
		p.SetDelay(0, 0)
		rawExists(t, raw, from+n, from+2*n)
		first = readReplies(from, from+2*n)
		require.GreaterOrEqual(t, first.Sub(t0), long, "a held frame lost its delay")
	}
	require.Equal(t, 5*n, p.Requests()[wire.OpExists])
	require.Zero(t, p.Held())
}

// Exchanges logs requests as forwarded to the server and replies as
// forwarded to the client, with the opcode of the request each answers:
// under a reply delay, requests sent back to back are logged before any
// reply, and a sequential client's are interleaved with them.
func TestIntegration_ProxyExchanges(t *testing.T) {
	c := track(zktest.Start(t))
	p := c.Proxy(t)
	raw := rawSession(t, p)

	p.SetDelay(0, 20*time.Millisecond)
	rawExists(t, raw, 1, 3) // two requests back to back
	for range 2 {
		_, err := wire.ReadFrame(raw, wire.DefaultMaxFrame)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return len(p.Exchanges()) == 4 }, 10*time.Second, time.Millisecond)
	ex := func(xid int32, reply bool) zktest.Exchange {
		x := zktest.Exchange{Conn: 1, Xid: xid, Op: wire.OpExists, Reply: reply}
		if !reply {
			x.Path = "/"
		}
		return x
	}
	require.Equal(t, []zktest.Exchange{ex(1, false), ex(2, false), ex(1, true), ex(2, true)}, p.Exchanges())

	// A sequential client through the proxy: each reply comes before the
	// next request; errors are logged with their codes.
	p.ResetCounts()
	require.Empty(t, p.Exchanges())
	conn := p.Connect(t, 8*time.Second)
	_, _, err := conn.Get("/no-such-node")
	require.ErrorIs(t, err, zk.ErrNoNode)
	_, _, err = conn.Children("/")
	require.NoError(t, err)
	var got []zktest.Exchange
	for _, x := range p.Exchanges() {
		x.Xid = 0
		got = append(got, x)
	}
	require.Equal(t, []zktest.Exchange{
		{Conn: 2, Op: wire.OpGetData, Path: "/no-such-node"}, {Conn: 2, Op: wire.OpGetData, Reply: true, Err: -101},
		{Conn: 2, Op: wire.OpGetChildren2, Path: "/"}, {Conn: 2, Op: wire.OpGetChildren2, Reply: true},
	}, got)
}
