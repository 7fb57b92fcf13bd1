package zktest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/wire"
)

// ConnOption is a go-zookeeper connection option such as zk.WithDialer or
// zk.WithEventCallback. (go-zookeeper's own option type is unexported; its
// values convert to this type implicitly.)
type ConnOption = func(*zk.Conn)

// credential is what Expire needs to take over a session.
type credential struct {
	passwd    []byte
	timeoutMs int32
}

// sessionBook records the credentials of every session established through
// a zktest dialer or proxy, keyed by session id.
type sessionBook struct {
	mu sync.Mutex
	m  map[int64]credential
}

func newSessionBook() *sessionBook { return &sessionBook{m: map[int64]credential{}} }

// recordPayload records the session from a ConnectResponse payload; refused
// or malformed handshakes are ignored.
func (b *sessionBook) recordPayload(p []byte) {
	timeout, sid, passwd, err := wire.ParseConnectResponse(p)
	if err != nil || sid == 0 {
		return
	}
	b.mu.Lock()
	b.m[sid] = credential{passwd: passwd, timeoutMs: timeout}
	b.mu.Unlock()
}

func (b *sessionBook) get(sid int64) (credential, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.m[sid]
	return c, ok
}

// SessionTimeout returns the session timeout the server negotiated for a
// session recorded by this Cluster's dialers or proxies, and false if the
// session was not seen.
func (c *Cluster) SessionTimeout(sessionID int64) (time.Duration, bool) {
	cr, ok := c.book.get(sessionID)
	return time.Duration(cr.timeoutMs) * time.Millisecond, ok
}

// recordingConn passes everything through and feeds the first server frame
// (the ConnectResponse) to the session book.
type recordingConn struct {
	net.Conn
	book  *sessionBook
	mu    sync.Mutex
	first wire.FirstFrame
}

func (r *recordingConn) Read(p []byte) (int, error) {
	n, err := r.Conn.Read(p)
	if n > 0 {
		r.mu.Lock()
		if payload, _ := r.first.Feed(p[:n]); payload != nil {
			r.book.recordPayload(payload)
		}
		r.mu.Unlock()
	}
	return n, err
}

// Dialer returns a plain TCP dialer for zk.WithDialer that records each
// session's id and password from the server's ConnectResponse, so that
// Expire can end it. It adds no faults. For a cluster started WithTLS it
// also does the TLS handshake (with TLS().ClientConfig()), so that
// go-zookeeper, which has no TLS of its own, can connect; a client that
// does its own TLS (zklock.WithTLS) should not use it.
func (c *Cluster) Dialer() zk.Dialer { return c.WrapDialer(net.DialTimeout) }

// WrapDialer returns a dialer that dials with d and records session
// credentials like Dialer (over TLS for a cluster started WithTLS, as
// Dialer), for tests that inject their own client faults through
// zk.WithDialer and still want Expire.
func (c *Cluster) WrapDialer(d zk.Dialer) zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		conn, err := d(network, address, timeout)
		if err != nil {
			return nil, err
		}
		if tc := c.clientTLS(); tc != nil {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			tconn := tls.Client(conn, forAddr(tc, address))
			if err := tconn.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, fmt.Errorf("zktest: TLS handshake with %s: %w", address, err)
			}
			conn = tconn
		}
		return &recordingConn{Conn: conn, book: c.book}, nil
	}
}

// Connect opens a go-zookeeper connection to all members through Dialer,
// waits (up to 30s, else t.Fatal) until it has a session, and closes it in
// the test's cleanup. opts are applied after zktest's own options, so a
// zk.WithDialer in opts replaces Dialer (wrap it with WrapDialer to keep
// Expire working). go-zookeeper's log lines go to t.Logf until cleanup.
// Call it from the test's goroutine.
func (c *Cluster) Connect(t testing.TB, sessionTimeout time.Duration, opts ...ConnOption) *zk.Conn {
	t.Helper()
	return c.ConnectTo(t, c.servers, sessionTimeout, opts...)
}

// ConnectTo is Connect restricted to the given servers (for example
// c.Servers()[1:2] to pin a client to one member).
func (c *Cluster) ConnectTo(t testing.TB, servers []string, sessionTimeout time.Duration, opts ...ConnOption) *zk.Conn {
	t.Helper()
	return connect(t, servers, sessionTimeout, c.Dialer(), opts)
}

func connect(t testing.TB, servers []string, timeout time.Duration, d zk.Dialer, opts []ConnOption) *zk.Conn {
	t.Helper()
	lg := &testLogger{t: t, on: true}
	conn, _, err := zk.Connect(servers, timeout, zk.WithDialer(d), zk.WithLogger(lg), zk.WithLogInfo(false),
		func(zc *zk.Conn) {
			for _, o := range opts {
				o(zc)
			}
		})
	if err != nil {
		t.Fatalf("zktest: connect to %v: %v", servers, err)
	}
	t.Cleanup(func() {
		lg.off()
		conn.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for conn.State() != zk.StateHasSession {
		if time.Now().After(deadline) {
			t.Fatalf("zktest: no session with %v after 30s (state %v)", servers, conn.State())
		}
		<-tick.C
	}
	return conn
}

// testLogger forwards go-zookeeper's log lines to t.Logf until the
// connection is closed in cleanup (logging after a test ends panics).
type testLogger struct {
	mu sync.Mutex
	t  testing.TB
	on bool
}

func (l *testLogger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.on {
		l.t.Logf("zk client: "+format, args...)
	}
}

func (l *testLogger) off() {
	l.mu.Lock()
	l.on = false
	l.mu.Unlock()
}
