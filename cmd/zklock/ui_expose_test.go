package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A --listen beyond loopback is refused (exit 2, before connecting: no
// server is given) unless a token, client certificates or
// --insecure-listen; a token file that others can read, or a short token,
// is refused too.
func TestUIRefusesExposure(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(token, []byte("0123456789abcdef0123\n"), 0o600))
	open := filepath.Join(dir, "open")
	require.NoError(t, os.WriteFile(open, []byte("0123456789abcdef0123\n"), 0o644))
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("secret\n"), 0o600))
	env := []string{"ZKLOCK_SERVERS=127.0.0.1:1", "ZKLOCK_TIMEOUT=1s"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "--listen 0.0.0.0:0 reaches beyond loopback: it would show every lock path"},
		{[]string{"--listen", ":0", "--allow-revoke"}, "and the button that asks holders to release to anyone who can connect"},
		{[]string{"--listen", "[::]:0"}, "--insecure-listen"},
		{[]string{"--listen", "0.0.0.0:0", "--ui-tls-cert", "x.pem"}, "--ui-tls-cert and --ui-tls-key go together"},
		{[]string{"--auth-token-file", open}, "permissions 0644 for " + open + " are too open"},
		{[]string{"--auth-token-file", short}, "has 6 bytes; want 16 or more"},
		{[]string{"--auth-token-file", filepath.Join(dir, "missing")}, "invalid --auth-token-file"},
		{[]string{"--allowed-hosts", "*.example.com"}, `invalid --allowed-hosts entry "*.example.com": wildcards are not supported`},
		{[]string{"--allowed-hosts", "locks.example.com:"}, `"locks.example.com:": the port after ':' is empty`},
		{[]string{"--allowed-hosts", ":8080"}, `":8080": the name is empty`},
		{[]string{"--allowed-hosts", "locks.example.com:https"}, `port "https" is not a number from 1 to 65535`},
		{[]string{"--allowed-hosts", "locks.example.com:99999"}, `port "99999" is not a number`},
		{[]string{"--allowed-hosts", "https://locks.example.com"}, "it is a URL: give only its host"},
		{[]string{"--allowed-hosts", "[::1"}, "needs its closing ']'"},
		{[]string{"--allowed-hosts", "[locks]:80"}, "the part in brackets is no IPv6 address"},
		{[]string{"--allowed-hosts", "locks..example.com"}, "no empty labels"},
		{[]string{"--allowed-hosts", "locks example"}, "' ' cannot be in a host name"},
		{[]string{"--max-conns-per-client", "0"}, "invalid --max-conns-per-client 0"},
		{[]string{"--max-streams", "0"}, "invalid --max-streams 0"},
		{[]string{"--max-conns", "32"}, "invalid --max-conns 32: want more than --max-streams (32)"},
		{[]string{"--idle-timeout", "0s"}, "invalid --idle-timeout"},
		{[]string{"--history", "10s"}, "invalid --history 10s"},
		{[]string{"--ensemble-poll", "1ms"}, "invalid --ensemble-poll 1ms"},
		{[]string{"--members", "zk1:2181,zk2"}, `invalid --members entry "zk2"`},
	} {
		code, stdout, stderr := runZklock(t, env, append([]string{"ui"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
	for _, args := range [][]string{
		{"--listen", "0.0.0.0:8080", "--insecure-listen", "--allowed-hosts", "locks.example.com,locks.example.com.:8443,10.0.0.1,[::1]:80,::1,my_host"},
		{"--listen", ":8080", "--auth-token-file", token},
		{"--listen", "127.0.0.1:8080"},
		{"--listen", "localhost:8080"},
	} {
		e := exposeOpts{idleTimeout: time.Minute, maxStreams: 1, maxConns: 2}
		fs := newFlagSet("ui")
		registerExpose(fs, &e)
		var listen string
		fs.StringVar(&listen, "listen", "", "")
		require.NoError(t, fs.Parse(args))
		assert.NoError(t, checkExpose(listen, &e, true), args)
	}
}

// The hint of a usage error is printed on lines of its own, not as a
// literal \n.
func TestUIUsageHintLines(t *testing.T) {
	t.Parallel()
	code, _, stderr := runZklock(t, []string{"ZKLOCK_SERVERS=127.0.0.1:1"}, "ui", "--listen", "0.0.0.0:0")
	require.Equal(t, exitUsage, code, stderr)
	require.NotContains(t, stderr, `\n`)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Len(t, lines, 4, stderr)
	require.True(t, strings.HasPrefix(lines[0], "zklock: --listen 0.0.0.0:0 reaches beyond loopback"), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "Require a token (--auth-token-file FILE)"), lines[1])
	require.Equal(t, "or accept that with --insecure-listen", lines[2])
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"": false, "0.0.0.0": false, "::": false, "192.0.2.7": false, "127.0.0.1": true, "127.8.9.10": true,
		"::1": true, "localhost": true, "LocalHost": true, "no-such-host.invalid": false,
	} {
		assert.Equal(t, want, isLoopback(host), host)
	}
}

// uiWith starts zklock ui on loopback with args and returns its base URL
// (http or https).
func uiWith(t *testing.T, env []string, args ...string) (*proc, string) {
	t.Helper()
	p := startZklock(t, env, append([]string{"ui", "--listen", "127.0.0.1:0"}, args...)...)
	line := p.firstLine(t)
	_, u, ok := strings.Cut(line, "serving ")
	require.True(t, ok, "first line %q\nstderr:\n%s", line, p.stderr)
	u, _, _ = strings.Cut(u, "/ ")
	return p, u
}

// With --auth-token-file, zklock ui asks every request for the token, and
// a foreign Host gets 403 even with it; without one, too.
func TestIntegration_UITokenAndHost(t *testing.T) {
	_, _, env := zkSetup(t)
	token := filepath.Join(t.TempDir(), "token")
	const tok = "a-token-for-the-test-0123456789"
	require.NoError(t, os.WriteFile(token, []byte(tok+"\n"), 0o600))
	p, base := uiWith(t, env, "--auth-token-file", token, "--allowed-hosts", "locks.example.com")
	require.Contains(t, p.lines(t, 2)[1], "answers to Host 127.0.0.1:")
	get := func(host, auth string) int {
		req, err := http.NewRequest(http.MethodGet, base+"/api/locks", nil)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	port := base[strings.LastIndex(base, ":")+1:]
	assert.Equal(t, http.StatusUnauthorized, get("", ""))
	assert.Equal(t, http.StatusUnauthorized, get("", "nope"))
	assert.Equal(t, http.StatusOK, get("", tok))
	assert.Equal(t, http.StatusOK, get("localhost:"+port, tok))
	assert.Equal(t, http.StatusOK, get("locks.example.com", tok))
	assert.Equal(t, http.StatusForbidden, get("rebind.attacker.example:"+port, tok))
	assert.Equal(t, http.StatusForbidden, get("localhost:1", tok), "another port")

	_, open := uiWith(t, env)
	req, err := http.NewRequest(http.MethodGet, open+"/api/locks", nil)
	require.NoError(t, err)
	req.Host = "rebind.attacker.example:" + open[strings.LastIndex(open, ":")+1:]
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// With --ui-tls-cert, --ui-tls-key and --ui-tls-client-ca, zklock ui
// serves HTTPS and only to a client with a certificate of that CA.
func TestIntegration_UIClientCertificates(t *testing.T) {
	_, _, env := zkSetup(t)
	pki := newTestPKI(t)
	_, base := uiWith(t, env, "--ui-tls-cert", pki.serverCert, "--ui-tls-key", pki.serverKey, "--ui-tls-client-ca", pki.caFile)
	require.True(t, strings.HasPrefix(base, "https://"), base)
	client := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pki.roots, Certificates: certs}}}
	}
	resp, err := client().Get(base + "/api/locks")
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err, "a client without a certificate")
	resp, err = client(pki.stranger).Get(base + "/api/locks")
	if err == nil {
		resp.Body.Close()
	}
	require.Error(t, err, "a client with a certificate of another CA")
	resp, err = client(pki.client).Get(base + "/api/locks")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// A keep-alive connection left idle is closed after --idle-timeout.
func TestIntegration_UIIdleTimeout(t *testing.T) {
	_, _, env := zkSetup(t)
	_, base := uiWith(t, env, "--idle-timeout", "1s")
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = io.WriteString(conn, "GET /api/locks HTTP/1.1\r\nHost: "+strings.TrimPrefix(base, "http://")+"\r\n\r\n")
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = r.ReadByte() // blocks until the server closes the idle connection
	require.ErrorIs(t, err, io.EOF, "the idle connection was not closed within 30s")
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout())
}

// testPKI is a CA made for a test, a server certificate for 127.0.0.1 and
// a client certificate signed by it, and a client certificate of another
// CA.
type testPKI struct {
	caFile, serverCert, serverKey string
	roots                         *x509.CertPool
	client, stranger              tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	ca, caKey := newCert(t, nil, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "zklock ui test CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true})
	other, otherKey := newCert(t, nil, nil, &x509.Certificate{Subject: pkix.Name{CommonName: "another CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true})
	srv, srvKey := newCert(t, ca, caKey, &x509.Certificate{Subject: pkix.Name{CommonName: "zklock ui"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	cli, cliKey := newCert(t, ca, caKey, &x509.Certificate{Subject: pkix.Name{CommonName: "operator"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	str, strKey := newCert(t, other, otherKey, &x509.Certificate{Subject: pkix.Name{CommonName: "stranger"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	p := &testPKI{caFile: filepath.Join(dir, "ca.pem"), serverCert: filepath.Join(dir, "ui.pem"), serverKey: filepath.Join(dir, "ui-key.pem"),
		roots: x509.NewCertPool()}
	p.roots.AddCert(ca)
	writePEM(t, p.caFile, "CERTIFICATE", ca.Raw)
	writePEM(t, p.serverCert, "CERTIFICATE", srv.Raw)
	der, err := x509.MarshalPKCS8PrivateKey(srvKey)
	require.NoError(t, err)
	writePEM(t, p.serverKey, "PRIVATE KEY", der)
	p.client = tls.Certificate{Certificate: [][]byte{cli.Raw}, PrivateKey: cliKey}
	p.stranger = tls.Certificate{Certificate: [][]byte{str.Raw}, PrivateKey: strKey}
	return p
}

// newCert makes a certificate from tmpl, signed by parent (self-signed if
// nil).
func newCert(t *testing.T, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl.SerialNumber, tmpl.NotBefore, tmpl.NotAfter = serial, time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert, key
}

func writePEM(t *testing.T, name, typ string, der []byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
}

// What zklock ui prints of itself: the Host values it answers to, and
// what it exposes to whom beyond loopback.
func TestServedHostsAndExposure(t *testing.T) {
	loop := &exposeOpts{loopback: true, allowedHosts: "locks.example.com, proxy:443"}
	got := servedHosts("127.0.0.1:0", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}, loop)
	assert.Equal(t, []string{"127.0.0.1:8080", "localhost:8080", "[::1]:8080", "locks.example.com", "proxy:443"}, got)
	all := servedHosts(":8080", &net.TCPAddr{IP: net.IPv6zero, Port: 8080}, &exposeOpts{})
	assert.Contains(t, all, "localhost:8080")
	if h, err := os.Hostname(); err == nil {
		assert.Contains(t, all, net.JoinHostPort(h, "8080"))
	}
	lan := servedHosts("192.0.2.7:8080", &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8080}, &exposeOpts{})
	assert.Equal(t, []string{"192.0.2.7:8080"}, lan)

	assert.Equal(t, "listening beyond loopback: it shows every lock path, holder id, session and fencing token under the root, "+
		"and a button that asks holders to release to clients with the token of --auth-token-file",
		exposure(&exposeOpts{token: "t"}, true))
	assert.Contains(t, exposure(&exposeOpts{}, false), "to anyone who can connect")
	assert.Contains(t, exposure(&exposeOpts{tls: &tls.Config{ClientCAs: x509.NewCertPool()}}, false), "to clients with a certificate of --ui-tls-client-ca")
}
