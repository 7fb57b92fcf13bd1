//go:build unix

package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rwHolder runs `zklock VERB PATH` (read or write) with no CMD and returns
// it with the node and token it printed.
func rwHolder(t *testing.T, env []string, verb, path string) (*proc, string, int64) {
	t.Helper()
	p := startZklock(t, env, verb, path)
	node, tok, ok := strings.Cut(p.firstLine(t), " ")
	require.True(t, ok, "want NODE TOKEN, got stdout %q stderr %q", p.stdout, p.stderr)
	token, err := strconv.ParseInt(tok, 10, 64)
	require.NoError(t, err)
	return p, node, token
}

// Readers share, a writer excludes them both ways, and status shows the
// kinds.
func TestIntegration_ReadWriteVerbs(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	const dir = "/locks/rwcli"

	r1, n1, tok1 := rwHolder(t, env, "read", "rwcli")
	r2, n2, _ := rwHolder(t, env, "read", "rwcli") // shares: it prints while r1 holds
	assert.Contains(t, n1, "-__READ__")
	assert.Contains(t, n2, "-__READ__")
	assert.Equal(t, czxid(t, conn, n1), tok1)
	assert.Len(t, children(t, conn, dir), 2)

	code, stdout, stderr := runZklock(t, env, "status", "rwcli")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	holds := slices.Index(strings.Fields(lines[1]), "HOLDS")
	require.GreaterOrEqual(t, holds, 0, stdout)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		assert.Equal(t, "read", f[1], stdout)
		assert.Equal(t, "yes", f[holds], "both readers hold:\n%s", stdout)
	}

	marker := filepath.Join(t.TempDir(), "ran")
	code, _, stderr = runZklock(t, env, "--try", "write", "rwcli", "sh", "-c", `touch "$0"`, marker)
	assert.Equal(t, exitNotAcquired, code, stderr)
	assert.NoFileExists(t, marker, "a writer ran while readers held")
	assert.Len(t, children(t, conn, dir), 2, "--try write left a node")

	// A writer queued behind the readers runs once both are gone.
	out := filepath.Join(t.TempDir(), "node")
	w := startZklock(t, env, "write", "rwcli", "sh", "-c", `printf '%s\n' "$ZKLOCK_NODE" > "$0.tmp" && mv "$0.tmp" "$0"`, out)
	waitChildren(t, conn, dir, 3)
	require.NoError(t, r1.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, r1.wait(t, 20*time.Second), r1.stderr.String())
	assert.NoFileExists(t, out, "the writer ran while a reader held")
	require.NoError(t, r2.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, r2.wait(t, 20*time.Second), r2.stderr.String())
	assert.Equal(t, exitOK, w.wait(t, 20*time.Second), w.stderr.String())
	assert.Contains(t, waitFile(t, out), "-__WRIT__")

	// A writer holds: --try read is refused.
	wh, wn, _ := rwHolder(t, env, "write", "rwcli")
	assert.Contains(t, wn, "-__WRIT__")
	code, stdout, stderr = runZklock(t, env, "status", "rwcli", "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, compactJSON(t, []byte(stdout)), `"kind":"write","sequence":`)
	assert.Contains(t, compactJSON(t, []byte(stdout)), `"holds":true`)
	code, _, stderr = runZklock(t, env, "--try", "read", "rwcli", "true")
	assert.Equal(t, exitNotAcquired, code, stderr)
	require.NoError(t, wh.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, wh.wait(t, 20*time.Second), wh.stderr.String())
	assert.Empty(t, children(t, conn, dir), "node left behind")
}

// --revocable works for both halves: `zklock revoke NODE` ends the holder
// as a loss does (exit 4), and its node is gone.
func TestIntegration_ReadWriteRevocable(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	for _, verb := range []string{"read", "write"} {
		p := startZklock(t, env, verb, "rwrev", "--revocable")
		node, _, ok := strings.Cut(p.firstLine(t), " ")
		require.True(t, ok, p.stderr.String())
		data, _, err := conn.Get(node)
		require.NoError(t, err)
		assert.Empty(t, data, "a revocable node stores empty data")
		code, _, stderr := runZklock(t, env, "revoke", node)
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Contains(t, p.stderr.String(), "revocation requested")
		assert.Empty(t, children(t, conn, "/locks/rwrev"), "node left behind")
	}
}
