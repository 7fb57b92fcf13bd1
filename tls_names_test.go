package zklock_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/proc"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// nameDialer dials host names of the test's own (names that resolve
// nowhere) at 127.0.0.1, and any other address as net.DialTimeout does:
// a resolver for the test, adding nothing to the system's.
func nameDialer(names ...string) func(network, addr string, timeout time.Duration) (net.Conn, error) {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err == nil {
			for _, n := range names {
				if host == n {
					addr = net.JoinHostPort("127.0.0.1", port)
				}
			}
		}
		return net.DialTimeout(network, addr, timeout)
	}
}

// named returns c's member addresses with each member's host name of
// WithTLSHostNames in place of its IP address.
func named(t *testing.T, c *zktest.Cluster) []string {
	t.Helper()
	out := make([]string, len(c.Servers()))
	for i, s := range c.Servers() {
		_, port, err := net.SplitHostPort(s)
		require.NoError(t, err)
		out[i] = net.JoinHostPort(c.TLS().HostNames[i], port)
	}
	return out
}

// waitFor opens a session and waits up to d for it to connect.
func waitFor(t *testing.T, servers []string, d time.Duration, opts ...zklock.SessionOption) (*zklock.Session, error) {
	t.Helper()
	s, err := zklock.Connect(servers, append([]zklock.SessionOption{zklock.WithSessionTimeout(4 * time.Second)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s, s.WaitConnected(ctx)
}

// TLS as deployed: an ensemble whose members have certificates for their
// host names only (no IP SANs; one of them localhost, which the system
// resolves, the others names the test's dialer maps to 127.0.0.1). Each
// member's certificate is checked against the name given for it: the
// session connects to every member by its name and takes a lock; a member
// dialled under another member's name is refused with x509's reason
// (wrong name), as is a member dialled by IP address, unless ServerName
// names it (one name for every member, the way round before).
func TestIntegration_TLSHostNameCertificates(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, zktest.WithTLSHostNames("localhost", "zk2.zklock.test", "zk3.zklock.test"), zktest.WithTLSClientAuth())
	servers := named(t, c)
	dial := zklock.WithDialer(nameDialer("zk2.zklock.test", "zk3.zklock.test"))
	tc := c.TLS().ClientConfig()

	s, err := waitFor(t, servers, 30*time.Second, zklock.WithTLS(tc), dial)
	require.NoError(t, err)
	m, err := zklock.NewMutex(s, "/locks/tls-names")
	require.NoError(t, err)
	h, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	ok, stat, err := s.Conn().Exists(h.Node())
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, stat.Czxid, h.Token())
	require.NoError(t, h.Release())

	for i, srv := range servers { // every member, each by its own name
		_, err := waitFor(t, []string{srv}, 20*time.Second, zklock.WithTLS(tc), dial)
		require.NoError(t, err, "member %d as %s", i, srv)
	}

	// Member 1 (zk2) dialled as zk3: the name does not match.
	_, port, _ := net.SplitHostPort(c.Servers()[1])
	_, err = waitFor(t, []string{net.JoinHostPort("zk3.zklock.test", port)}, 2*time.Second, zklock.WithTLS(tc), dial)
	require.ErrorIs(t, err, zklock.ErrTLSHandshake)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var host x509.HostnameError
	require.ErrorAs(t, err, &host)
	assert.Contains(t, err.Error(), "certificate is valid for zk2.zklock.test, not zk3.zklock.test")
	var ce *zklock.ConnectError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "zk3.zklock.test:"+port, ce.Server)

	// By IP address: no IP SAN, refused; with ServerName, accepted.
	_, err = waitFor(t, c.Servers()[1:2], 2*time.Second, zklock.WithTLS(tc))
	require.ErrorIs(t, err, zklock.ErrTLSHandshake)
	assert.Contains(t, err.Error(), "cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs")
	one := tc.Clone()
	one.ServerName = "zk2.zklock.test"
	_, err = waitFor(t, c.Servers()[1:2], 20*time.Second, zklock.WithTLS(one))
	require.NoError(t, err)
}

// A refused TLS handshake says why, everywhere: WaitConnected's error and
// an acquire's (once its context ends) wrap ErrTLSHandshake, a
// *ConnectError and crypto/tls's reason, and not ErrUnreachable; the
// logger has the reason; WithFailOpen does not run without the lock on
// it. For an untrusted server (unknown authority), a wrong name, and a
// client without the certificate the server requires.
func TestIntegration_TLSFailureReasons(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithTLSClientAuth()) // ZooKeeper 3.8 serves TLS 1.2 by default
	c13 := zktest.Start(t, zktest.WithTLSClientAuth(), zktest.WithSystemProperty("zookeeper.ssl.protocol", "TLSv1.3"),
		zktest.WithSystemProperty("zookeeper.ssl.enabledProtocols", "TLSv1.3"),
		zktest.WithSystemProperty("zookeeper.ssl.ciphersuites", "TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384"))
	good := c.TLS().ClientConfig()
	untrusted := good.Clone()
	untrusted.RootCAs = x509.NewCertPool()
	wrongName := good.Clone()
	wrongName.ServerName = "zk9.zklock.test"
	noCert := good.Clone()
	noCert.Certificates = nil
	noCert13 := noCert.Clone()
	noCert13.MinVersion = tls.VersionTLS13
	for _, tc := range []struct {
		name   string
		c      *zktest.Cluster
		cfg    *tls.Config
		reason error  // nil: no reason of ours, crypto/tls's words only
		text   string // in the error and the log
		as     any
	}{
		{"untrusted server", c, untrusted, zklock.ErrTLSUntrusted, "the server's certificate is not trusted: tls: failed to verify certificate: x509: certificate signed by unknown authority", &x509.UnknownAuthorityError{}},
		{"wrong name", c, wrongName, zklock.ErrTLSNameMismatch, "the server's certificate does not name the server: tls: failed to verify certificate: x509: certificate is valid for localhost, not zk9.zklock.test", &x509.HostnameError{}},
		// JVMs differ in the alert (bad_certificate, handshake_failure,
		// certificate_required): the reason is what the user acts on.
		{"no client certificate", c, noCert, zklock.ErrTLSClientCertificate, "the server refused our client certificate (we sent none; it requires one): remote error: tls: ", nil},
		{"TLS 1.3 only, against TLS 1.2", c, noCert13, nil, "remote error: tls: protocol version not supported", nil},
		// In TLS 1.3 the client's handshake is over before the server has
		// judged its certificate: the refusal comes with the first read.
		{"no client certificate, TLS 1.3", c13, noCert13, zklock.ErrTLSClientCertificate, "TLS handshake failed with " + c13.Servers()[0] + ": the server refused our client certificate (we sent none; it requires one): remote error: tls: ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs proc.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			c := tc.c
			s, err := waitFor(t, c.Servers(), time.Second, zklock.WithTLS(tc.cfg), zklock.WithLogger(log))
			require.ErrorIs(t, err, zklock.ErrTLSHandshake)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.NotErrorIs(t, err, zklock.ErrUnreachable)
			assert.Contains(t, err.Error(), tc.text)
			for _, r := range []error{zklock.ErrTLSUntrusted, zklock.ErrTLSNameMismatch, zklock.ErrTLSClientCertificate} {
				assert.Equal(t, r == tc.reason, errors.Is(err, r), "%v: %v", r, err)
			}
			var ce *zklock.ConnectError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.Servers()[0], ce.Server)
			if tc.as != nil {
				require.ErrorAs(t, err, tc.as)
			}
			assert.Contains(t, logs.String(), "connection attempt failed")
			assert.Contains(t, logs.String(), tc.text)

			m, err := zklock.NewMutex(s, "/locks/tls-refused")
			require.NoError(t, err)
			_, err = m.Lock(ctxTimeout(t, 500*time.Millisecond))
			require.ErrorIs(t, err, zklock.ErrTLSHandshake)
			require.NotErrorIs(t, err, zklock.ErrUnreachable)
			assert.Contains(t, err.Error(), tc.text)

			open, err := zklock.NewMutex(s, "/locks/tls-refused", zklock.WithFailOpen(200*time.Millisecond))
			require.NoError(t, err)
			h, err := open.Lock(ctxTimeout(t, 10*time.Second))
			require.Nil(t, h, "a TLS refusal must not run without the lock")
			require.ErrorIs(t, err, zklock.ErrTLSHandshake)
			require.NotErrorIs(t, err, zklock.ErrUnlocked)
		})
	}
}

// Without TLS, the reason a server is unreachable reaches the caller too,
// and the acquire's error still wraps ErrUnreachable.
func TestUnreachableSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nobody listens there now
	s, err := waitFor(t, []string{addr}, 300*time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var ce *zklock.ConnectError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, addr, ce.Server)
	assert.Contains(t, err.Error(), "connection refused")
	require.NotErrorIs(t, err, zklock.ErrTLSHandshake)

	m, err := zklock.NewMutex(s, "/locks/unreachable")
	require.NoError(t, err)
	_, err = m.Lock(ctxTimeout(t, 300*time.Millisecond))
	require.ErrorIs(t, err, zklock.ErrUnreachable)
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.Contains(err.Error(), "connection refused"), err.Error())
	require.False(t, errors.Is(err, zklock.ErrTLSHandshake))
}
