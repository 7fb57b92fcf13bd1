//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Tests of the binary against a real ZooKeeper (one standalone server per
// test, started by zktest; the tests run in parallel).

const zkSessionTimeout = 4 * time.Second

// zkSetup starts a server and returns it, a connection for checks, and the
// environment that points zklock at it.
func zkSetup(t *testing.T) (*zktest.Cluster, *zk.Conn, []string) {
	t.Helper()
	c := zktest.Start(t)
	conn := c.Connect(t, zkSessionTimeout)
	return c, conn, []string{"ZKLOCK_SERVERS=" + c.ConnectString(), "ZKLOCK_SESSION_TIMEOUT=" + zkSessionTimeout.String()}
}

// children lists path's children, sorted; none if path is missing.
func children(t *testing.T, conn *zk.Conn, path string) []string {
	t.Helper()
	cs, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	require.NoError(t, err)
	slices.Sort(cs)
	return cs
}

func waitChildren(t *testing.T, conn *zk.Conn, path string, n int) []string {
	t.Helper()
	require.Eventually(t, func() bool {
		cs, _, err := conn.Children(path)
		return err == nil && len(cs) == n
	}, 20*time.Second, 5*time.Millisecond, "waiting for %d children of %s", n, path)
	return children(t, conn, path)
}

// holder runs `zklock lock PATH` with no CMD and returns it with the node
// and token it printed.
func holder(t *testing.T, env []string, path string) (*proc, string, int64) {
	t.Helper()
	p := startZklock(t, env, "lock", path)
	node, tok, ok := strings.Cut(p.firstLine(t), " ")
	require.True(t, ok, "want NODE TOKEN, got stdout %q stderr %q", p.stdout, p.stderr)
	token, err := strconv.ParseInt(tok, 10, 64)
	require.NoError(t, err)
	return p, node, token
}

// czxid returns the czxid of node, which must exist.
func czxid(t *testing.T, conn *zk.Conn, node string) int64 {
	t.Helper()
	ok, stat, err := conn.Exists(node)
	require.NoError(t, err)
	require.True(t, ok, "%s does not exist", node)
	return stat.Czxid
}

func waitFile(t *testing.T, path string) string {
	t.Helper()
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		return err == nil && bytes.HasSuffix(b, []byte("\n"))
	}, 20*time.Second, 5*time.Millisecond, "waiting for %s", path)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestIntegration_ChildEnvAndFencingToken(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	out := filepath.Join(t.TempDir(), "env")
	var stdin *os.File
	p := startWith(t, env, func(cmd *exec.Cmd) {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		cmd.Stdin, stdin = r, w
		t.Cleanup(func() { r.Close(); w.Close() })
	}, "lock", "envtest", "sh", "-c",
		`printf '%s\n%s\n%s\n%s\n' "$ZKLOCK_PATH" "$ZKLOCK_NODE" "$ZKLOCK_FENCING_TOKEN" "$ZKLOCK_FENCING_ERA" > "$0.tmp" && mv "$0.tmp" "$0"; read -r _; exit 0`, out)

	lines := strings.Split(strings.TrimSuffix(waitFile(t, out), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.Equal(t, "/locks/envtest", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "/locks/envtest/_c_"), lines[1])
	assert.Contains(t, lines[1], "-lock-")
	// While the child runs, its node exists and the token is its czxid.
	assert.Equal(t, strconv.FormatInt(czxid(t, conn, lines[1]), 10), lines[2])
	era, _, err := conn.Get(zklock.EnsemblePath) // and the era the ensemble's
	require.NoError(t, err)
	assert.Equal(t, string(era), lines[3])
	assert.Equal(t, []string{filepath.Base(lines[1])}, children(t, conn, "/locks/envtest"))

	require.NoError(t, stdin.Close()) // the child's read ends: it exits 0
	assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Empty(t, children(t, conn, "/locks/envtest"), "node left behind")
}

func TestIntegration_ExitStatusPropagates(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	tests := []struct {
		script string
		want   int
	}{
		{"exit 7", 7},
		{"exit 0", 0},
		{"kill -KILL $$", 128 + 9},
		{"kill -USR1 $$", 128 + int(syscall.SIGUSR1)},
	}
	for _, tt := range tests {
		code, _, stderr := runZklock(t, env, "lock", "/status/prop", "sh", "-c", tt.script)
		assert.Equal(t, tt.want, code, "%s: %s", tt.script, stderr)
	}
	assert.Empty(t, children(t, conn, "/status/prop"), "node left behind")
}

func TestIntegration_RunsNeverOverlap(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	log := filepath.Join(t.TempDir(), "log")
	const runs = 4
	// Each child appends a start line with its token, works a little, and
	// appends an end line. Under the lock the lines must pair up.
	script := `echo "start $1 $ZKLOCK_FENCING_TOKEN" >> "$0"; sleep 0.1; echo "end $1" >> "$0"`
	procs := make([]*proc, runs)
	for i := range procs {
		procs[i] = startZklock(t, env, "lock", "overlap", "sh", "-c", script, log, strconv.Itoa(i))
	}
	for _, p := range procs {
		assert.Equal(t, exitOK, p.wait(t, 30*time.Second), p.stderr.String())
	}
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 2*runs, string(b))
	seen := map[string]bool{}
	last := int64(0)
	for i := 0; i < len(lines); i += 2 {
		f := strings.Fields(lines[i])
		require.Len(t, f, 3, lines[i])
		require.Equal(t, "start", f[0], "interleaved:\n%s", b)
		require.Equal(t, "end "+f[1], lines[i+1], "interleaved:\n%s", b)
		token, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		require.Greater(t, token, last, "fencing tokens must increase:\n%s", b)
		last = token
		seen[f[1]] = true
	}
	assert.Len(t, seen, runs)
	assert.Empty(t, children(t, conn, "/locks/overlap"))
}

func TestIntegration_Auth(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	// /secure is writable only by digest user:pw.
	require.NoError(t, conn.AddAuth("digest", []byte("user:pw")))
	_, err := conn.Create("/secure", nil, 0, zk.DigestACL(zk.PermAll, "user", "pw"))
	require.NoError(t, err)

	script := `test -n "$ZKLOCK_NODE"`
	code, _, stderr := runZklock(t, env, "--auth", "digest:user:pw", "lock", "/secure/job", "sh", "-c", script)
	assert.Equal(t, exitOK, code, stderr)
	code, _, stderr = runZklock(t, append(env, "ZKLOCK_AUTH=digest:user:pw"), "lock", "/secure/job", "sh", "-c", script)
	assert.Equal(t, exitOK, code, stderr)
	// The lock directory, open to all, goes once empty (the server reaps
	// it within 100 ms); without it a client must create it in /secure.
	require.Eventually(t, func() bool {
		ok, _, err := conn.Exists("/secure/job")
		return err == nil && !ok
	}, 10*time.Second, 10*time.Millisecond)

	for _, auth := range []string{"", "digest:user:wrong"} {
		args := []string{"lock", "/secure/job", "true"}
		if auth != "" {
			args = append([]string{"--auth", auth}, args...)
		}
		code, _, stderr := runZklock(t, env, args...)
		assert.Equal(t, exitError, code, "auth %q: %s", auth, stderr)
		assert.Contains(t, stderr, "not authenticated", "auth %q", auth)
	}
	assert.Empty(t, children(t, conn, "/secure/job"))
}
