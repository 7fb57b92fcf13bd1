package zktest_test

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// A cluster started WithTLS serves only TLS: go-zookeeper connects through
// Dialer (which does the handshake), four-letter words and Expire work, and
// a plaintext client gets nothing.
func TestIntegration_TLSServer(t *testing.T) {
	c := track(zktest.Start(t, zktest.WithTLS()))
	tc := c.TLS()
	require.NotNil(t, tc)
	assert.False(t, tc.ClientAuth)

	conn := c.Connect(t, 4*time.Second)
	_, err := conn.Create("/tls", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	out, err := c.FourLetter(0, "srvr")
	require.NoError(t, err)
	assert.Contains(t, out, "Mode: standalone")
	require.NoError(t, c.Expire(conn.SessionID()))

	// A plaintext handshake on the only client port gets no answer.
	assertPlaintextRefused(t, c.Servers()[0])
	// And a client that does not trust the CA is refused.
	raw, err := tls.Dial("tcp", c.Servers()[0], &tls.Config{MinVersion: tls.VersionTLS12})
	if err == nil {
		raw.Close()
	}
	require.Error(t, err)
}

func TestIntegration_TLSClientAuth(t *testing.T) {
	c := track(zktest.Start(t, zktest.WithTLSClientAuth()))
	require.True(t, c.TLS().ClientAuth)
	conn := c.Connect(t, 4*time.Second) // with the client certificate
	_, _, err := conn.Exists("/")
	require.NoError(t, err)

	noCert := c.TLS().ClientConfig()
	noCert.Certificates = nil
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := tls.Dialer{Config: noCert}
	raw, err := d.DialContext(ctx, "tcp", c.Servers()[0])
	if err == nil {
		// TLS 1.3: the server's refusal arrives with the first read.
		raw.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = raw.Write([]byte("ruok"))
		if err == nil {
			_, err = raw.Read(make([]byte, 16))
		}
		raw.Close()
	}
	require.Error(t, err, "a client without a certificate was served")
	assert.False(t, errors.Is(err, context.DeadlineExceeded), "refused, not timed out: %v", err)
}

// assertPlaintextRefused sends a plaintext four-letter word and a
// ConnectRequest-sized write to addr and checks no ZooKeeper answer comes.
func assertPlaintextRefused(t *testing.T, addr string) {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	defer raw.Close()
	raw.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = raw.Write([]byte("ruok"))
	b := make([]byte, 64)
	n, _ := raw.Read(b)
	assert.False(t, strings.Contains(string(b[:n]), "imok"), "plaintext ruok answered: %q", b[:n])
}
