//go:build unix

package main

import (
	"os"
	"path/filepath"
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
// the client certificate, or without TLS, nothing is acquired and CMD does
// not run (exit 1: no server answered).
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

	// Refused: no client certificate; no TLS at all. CMD must not run.
	ran := filepath.Join(t.TempDir(), "ran")
	for name, args := range map[string][]string{
		"no client certificate": {"--tls-ca", files.CAFile, "--timeout", "2s", "lock", "tls-job", "touch", ran},
		"plaintext":             {"--timeout", "2s", "lock", "tls-job", "touch", ran},
		"untrusted server":      {"--tls-cert", files.CertFile, "--tls-key", files.KeyFile, "--timeout", "2s", "lock", "tls-job", "touch", ran},
	} {
		code, _, stderr := runZklock(t, base, args...)
		assert.Equal(t, exitError, code, "%s: %s", name, stderr)
		assert.Contains(t, stderr, "no ZooKeeper server answered", name)
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
