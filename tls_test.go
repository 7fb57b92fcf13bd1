package zklock_test

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// wireRecorder is a dialer that keeps every byte the client sends on the
// network, to check that what travels is TLS and not ZooKeeper's protocol.
type wireRecorder struct {
	mu   sync.Mutex
	sent bytes.Buffer
}

func (w *wireRecorder) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &recordedConn{Conn: c, w: w}, nil
}

func (w *wireRecorder) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.sent.Bytes())
}

type recordedConn struct {
	net.Conn
	w *wireRecorder
}

func (c *recordedConn) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	c.w.sent.Write(p)
	c.w.mu.Unlock()
	return c.Conn.Write(p)
}

// Every recipe works over TLS (the server has no plaintext port), with
// fencing tokens equal to the czxid of the holder's node, read back with
// Exists: the token tap reads the decrypted stream. What goes on the
// network is TLS: it starts with a TLS handshake record and never shows
// the lock's path in the clear.
func TestIntegration_TLSRecipes(t *testing.T) {
	c := zktest.Start(t, zktest.WithTLSClientAuth())
	rec := &wireRecorder{}
	s, err := zklock.Connect(c.Servers(), zklock.WithTLS(c.TLS().ClientConfig()),
		zklock.WithDialer(rec.dial), zklock.WithSessionTimeout(4*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.WaitConnected(ctx))

	checkToken := func(t *testing.T, h *zklock.Hold) {
		t.Helper()
		ok, stat, err := s.Conn().Exists(h.Node())
		require.NoError(t, err)
		require.True(t, ok, h.Node())
		assert.Equal(t, stat.Czxid, h.Token(), "token of %s", h.Node())
		assert.Equal(t, s.ID(), stat.EphemeralOwner)
		require.NoError(t, h.Release())
	}
	t.Run("mutex", func(t *testing.T) {
		m, err := zklock.NewMutex(s, "/tls-secret-path/mutex")
		require.NoError(t, err)
		h, err := m.Lock(ctx)
		require.NoError(t, err)
		checkToken(t, h)
	})
	t.Run("rwlock", func(t *testing.T) {
		rw, err := zklock.NewRWLock(s, "/tls-secret-path/rw")
		require.NoError(t, err)
		h, err := rw.WriteLock().Lock(ctx)
		require.NoError(t, err)
		checkToken(t, h)
		h, err = rw.ReadLock().Lock(ctx)
		require.NoError(t, err)
		checkToken(t, h)
	})
	t.Run("semaphore", func(t *testing.T) {
		sem, err := zklock.NewSemaphore(s, "/tls-secret-path/sem", 2)
		require.NoError(t, err)
		h, err := sem.Acquire(ctx)
		require.NoError(t, err)
		checkToken(t, h)
	})
	t.Run("election", func(t *testing.T) {
		e, err := zklock.NewLeaderElection(s, "/tls-secret-path/leader", "me")
		require.NoError(t, err)
		h, err := e.Campaign(ctx)
		require.NoError(t, err)
		checkToken(t, h)
	})

	wire := rec.bytes()
	require.NotEmpty(t, wire)
	assert.Equal(t, byte(0x16), wire[0], "the first byte sent is not a TLS handshake record")
	assert.False(t, bytes.Contains(wire, []byte("tls-secret-path")), "the lock path went over the network in the clear")
}

// With client certificates required, a session without one never
// connects: WaitConnected fails at its deadline and nothing is created.
func TestIntegration_TLSClientWithoutCertificateRefused(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithTLSClientAuth())
	noCert := c.TLS().ClientConfig()
	noCert.Certificates = nil
	s, err := zklock.Connect(c.Servers(), zklock.WithTLS(noCert), zklock.WithSessionTimeout(4*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	require.ErrorIs(t, s.WaitConnected(ctx), context.DeadlineExceeded)
	assert.Equal(t, zklock.StateConnecting, s.State())

	// A plaintext session gets nowhere either: the only port speaks TLS.
	plain, err := zklock.Connect(c.Servers(), zklock.WithSessionTimeout(4*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Close() })
	pctx, pcancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer pcancel()
	require.ErrorIs(t, plain.WaitConnected(pctx), context.DeadlineExceeded)

	// The same server serves a client with the certificate.
	conn := c.Connect(t, 4*time.Second)
	ok, _, err := conn.Exists("/")
	require.NoError(t, err)
	require.True(t, ok)
	children, _, err := conn.Children("/")
	require.NoError(t, err)
	assert.Equal(t, []string{"zookeeper"}, children, "a refused client created something")
}

// Curator over TLS (ClientCnxnSocketNetty, zookeeper.client.secure, PEM
// stores from zktest) and our Mutex over TLS exclude each other on one
// path, both ways.
func TestIntegration_TLSCuratorMutexInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t, zktest.WithTLSClientAuth())
		s, err := zklock.Connect(c.Servers(), zklock.WithTLS(c.TLS().ClientConfig()), zklock.WithSessionTimeout(4*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		require.NoError(t, s.WaitConnected(ctx))
		m, err := zklock.NewMutex(s, "/locks/tls-curator")
		require.NoError(t, err)

		cur := g.CuratorTLS(t, c.ConnectString(), 10*time.Second, c.TLS().CAFile, c.TLS().KeyStoreFile)
		cur.Must(t, "mutex A /locks/tls-curator")
		cur.Must(t, "acquire A")
		ev := waitEvent(t, cur, "A", "acquired")
		require.Regexp(t, `^/locks/tls-curator/_c_[0-9a-f-]{36}-lock-\d{10}$`, ev.Arg)
		_, err = m.TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked, "Curator holds over TLS")

		cur.Must(t, "release A")
		h, err := m.Lock(ctx)
		require.NoError(t, err)
		ok, stat, err := s.Conn().Exists(h.Node())
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, stat.Czxid, h.Token())
		cur.Must(t, "acquire A 500")
		waitEvent(t, cur, "A", "timeout")
		require.NoError(t, h.Release())
		cur.Must(t, "acquire A")
		waitEvent(t, cur, "A", "acquired")
		cur.Must(t, "release A")
	})
}
