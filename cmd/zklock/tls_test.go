//go:build unix

package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// zklock over TLS against a server that speaks only TLS and requires
// client certificates: --tls-ca/--tls-cert/--tls-key (or ZKLOCK_TLS_*)
// connect, the child's token is its node's czxid, and status works; without
// the client certificate, with an untrusted server, or without TLS, nothing
// is acquired and CMD does not run, --on-unreachable run or not (exit 1,
// saying why).
func TestIntegration_TLSFlags(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithTLSClientAuth())
	conn := c.Connect(t, zkSessionTimeout) // zktest's dialer speaks TLS
	files := c.TLS()
	base := []string{"ZKLOCK_SERVERS=" + c.ConnectString(), "ZKLOCK_SESSION_TIMEOUT=" + zkSessionTimeout.String()}
	tlsFlags := []string{"--tls-ca", files.CAFile, "--tls-cert", files.CertFile, "--tls-key", files.KeyFile}
	tlsEnv := append([]string{"ZKLOCK_TLS_CA=" + files.CAFile, "ZKLOCK_TLS_CERT=" + files.CertFile, "ZKLOCK_TLS_KEY=" + files.KeyFile}, base...)

	script := `printf '%s %s\n' "$ZKLOCK_NODE" "$ZKLOCK_FENCING_TOKEN" > "$0.tmp" && mv "$0.tmp" "$0"; while [ ! -e "$0.done" ]; do sleep 0.02; done`
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flags", base, append(append([]string{}, tlsFlags...), "lock", "tls-job")},
		{"environment", tlsEnv, []string{"write", "tls-rw"}},
		{"semaphore, flags after the verb", base, append([]string{"semaphore", "tls-sem", "--leases", "2"}, tlsFlags...)},
		{"elect", tlsEnv, []string{"elect", "tls-elect", "--id", "me"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			p := startZklock(t, tc.env, append(tc.args, "sh", "-c", script, out)...)
			node, tok, ok := strings.Cut(strings.TrimSpace(waitFile(t, out)), " ")
			require.True(t, ok)
			assert.Equal(t, strconv.FormatInt(czxid(t, conn, node), 10), tok, "the token is the czxid")
			require.NoError(t, os.WriteFile(out+".done", nil, 0o644))
			assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
			ok, _, err := conn.Exists(node)
			require.NoError(t, err)
			assert.False(t, ok, "node left behind")
		})
	}

	code, stdout, stderr := runZklock(t, tlsEnv, "status", "tls-job", "--json")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"path": "/locks/tls-job"`)

	// Refused: no client certificate; an untrusted server (the system's
	// roots): CMD must not run, even with --on-unreachable run, as a TLS
	// refusal is a configuration error. No TLS at all: the server closes
	// the connection, which is all a plaintext client can see (unreachable).
	ran := filepath.Join(t.TempDir(), "ran")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"no client certificate", []string{"--tls-ca", files.CAFile},
			[]string{"zklock: /locks/tls-job not acquired: TLS handshake failed with " + c.Servers()[0] +
				": the server refused our client certificate (we sent none; it requires one): remote error: tls: "}},
		{"untrusted server", []string{"--tls-cert", files.CertFile, "--tls-key", files.KeyFile},
			[]string{"TLS handshake failed with", "the server's certificate is not trusted", "x509: certificate signed by unknown authority", "check --tls-ca"}},
		{"plaintext", nil, []string{"no ZooKeeper server answered at " + c.ConnectString() + " within 2s (last attempt: connecting to " +
			c.Servers()[0] + ": session handshake: "}},
	} {
		modes := []string{"fail", "run"}
		if tc.name == "plaintext" {
			modes = modes[:1]
		}
		for _, unreachable := range modes {
			args := append(append([]string{}, tc.args...), "--on-unreachable", unreachable, "--timeout", "2s", "lock", "tls-job", "touch", ran)
			code, _, stderr := runZklock(t, base, args...)
			assert.Equal(t, exitError, code, "%s, %s: %s", tc.name, unreachable, stderr)
			for _, w := range tc.want {
				assert.Contains(t, stderr, w, "%s, %s", tc.name, unreachable)
			}
			assert.NotContains(t, stderr, "WITHOUT the lock", tc.name)
		}
	}
	assert.NoFileExists(t, ran)

	// Bad TLS settings are usage errors, before anything connects.
	for _, args := range [][]string{
		{"--tls-cert", files.CertFile, "lock", "x", "true"},
		{"--tls-key", files.KeyFile, "lock", "x", "true"},
		{"--tls-ca", filepath.Join(t.TempDir(), "missing.pem"), "lock", "x", "true"},
		{"--tls-ca", files.KeyFile, "lock", "x", "true"},
	} {
		code, _, stderr := runZklock(t, base, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, "--tls-", args)
	}
}

// A server whose certificate names a host only (localhost, no IP SAN), as
// deployed certificates do: --servers with the name connects, each server
// being checked against the host given for it; by IP address it is refused
// with x509's reason, unless --tls-server-name names the certificate's
// host; a --tls-server-name for another host is refused as well. -v logs
// the reason as the attempts fail, and CMD never runs on a refusal.
func TestIntegration_TLSServerNames(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithTLSHostNames("localhost"))
	files := c.TLS()
	_, port, err := net.SplitHostPort(c.Servers()[0])
	require.NoError(t, err)
	byName, byIP := "localhost:"+port, c.Servers()[0]
	env := []string{"ZKLOCK_TLS_CA=" + files.CAFile, "ZKLOCK_SESSION_TIMEOUT=" + zkSessionTimeout.String()}
	ran := filepath.Join(t.TempDir(), "ran")

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"by name", []string{"--servers", byName}},
		{"by IP, --tls-server-name", []string{"--servers", byIP, "--tls-server-name", "localhost"}},
		{"by IP, ZKLOCK_TLS_SERVER_NAME", []string{"--servers", byIP}},
	} {
		e := env
		if strings.Contains(tc.name, "ZKLOCK_") {
			e = append([]string{"ZKLOCK_TLS_SERVER_NAME=localhost"}, env...)
		}
		code, _, stderr := runZklock(t, e, append(tc.args, "--timeout", "20s", "lock", "tls-names", "true")...)
		assert.Equal(t, exitOK, code, "%s: %s", tc.name, stderr)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"by IP", []string{"--servers", byIP},
			"x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs"},
		{"wrong --tls-server-name", []string{"--servers", byName, "--tls-server-name", "zk9.zklock.test"},
			"x509: certificate is valid for localhost, not zk9.zklock.test"},
	} {
		args := append(tc.args, "-v", "--on-unreachable", "run", "--timeout", "1s", "lock", "tls-names", "touch", ran)
		code, _, stderr := runZklock(t, env, args...)
		assert.Equal(t, exitError, code, "%s: %s", tc.name, stderr)
		assert.Contains(t, stderr, "zklock: /locks/tls-names not acquired: TLS handshake failed with "+tc.args[1]+
			": the server's certificate does not name the server: tls: failed to verify certificate: "+tc.want, tc.name)
		assert.Regexp(t, `zklock: warning: connection attempt failed server=`+regexp.QuoteMeta(tc.args[1])+` err=".*`+
			regexp.QuoteMeta(tc.want), stderr, "%s: -v logs the reason", tc.name)
	}
	assert.NoFileExists(t, ran)

	inv, err := parseArgs([]string{"--tls-server-name", "zk1.example", "lock", "p"}, envMap(nil))
	require.NoError(t, err)
	require.NotNil(t, inv.cfg.tls, "--tls-server-name alone turns TLS on")
	assert.Equal(t, "zk1.example", inv.cfg.tls.ServerName)
	assert.Nil(t, inv.cfg.tls.RootCAs, "the system's roots")
}
