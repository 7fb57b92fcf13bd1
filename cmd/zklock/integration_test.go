//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
		`printf '%s\n%s\n%s\n' "$ZKLOCK_PATH" "$ZKLOCK_NODE" "$ZKLOCK_FENCING_TOKEN" > "$0.tmp" && mv "$0.tmp" "$0"; read -r _; exit 0`, out)

	lines := strings.Split(strings.TrimSuffix(waitFile(t, out), "\n"), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, "/locks/envtest", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "/locks/envtest/_c_"), lines[1])
	assert.Contains(t, lines[1], "-lock-")
	// While the child runs, its node exists and the token is its czxid.
	assert.Equal(t, strconv.FormatInt(czxid(t, conn, lines[1]), 10), lines[2])
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

func TestIntegration_TryOnHeldLockExits3(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, node, _ := holder(t, env, "held")
	marker := filepath.Join(t.TempDir(), "ran")

	p := startZklock(t, env, "--try", "lock", "held", "sh", "-c", `touch "$0"`, marker)
	assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Less(t, p.dur, 5*time.Second, "--try waited")
	assert.Contains(t, p.stderr.String(), "held by another participant")
	assert.NoFileExists(t, marker, "CMD ran without the lock")
	assert.Equal(t, []string{filepath.Base(node)}, children(t, conn, "/locks/held"), "--try left a node")
}

func TestIntegration_TimeoutOnHeldLockExits3(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, node, _ := holder(t, env, "held")
	marker := filepath.Join(t.TempDir(), "ran")

	p := startZklock(t, env, "--timeout", "500ms", "lock", "held", "sh", "-c", `touch "$0"`, marker)
	assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
	assert.GreaterOrEqual(t, p.dur, 500*time.Millisecond)
	assert.Less(t, p.dur, 5*time.Second)
	assert.Contains(t, p.stderr.String(), "not acquired within 500ms")
	assert.NoFileExists(t, marker, "CMD ran without the lock")
	assert.Equal(t, []string{filepath.Base(node)}, children(t, conn, "/locks/held"), "the waiter's node was left behind")
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

func TestIntegration_SIGTERMForwardedAndNodeDeleted(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	dir := t.TempDir()
	ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
	script := `trap 'echo TERM > "$1"; exit 5' TERM; echo ready > "$0"; while :; do sleep 0.05; done`
	p := startZklock(t, env, "lock", "fwd", "sh", "-c", script, ready, got)
	waitFile(t, ready)
	require.Len(t, children(t, conn, "/locks/fwd"), 1)

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, 5, p.wait(t, 20*time.Second), "want the child's status; stderr:\n%s", p.stderr)
	assert.Equal(t, "TERM\n", waitFile(t, got))
	assert.Empty(t, children(t, conn, "/locks/fwd"), "node left behind")
}

// zklockSession finds the session of the participant holding path.
func zklockSession(t *testing.T, env []string, path string) int64 {
	t.Helper()
	code, stdout, stderr := runZklock(t, env, "status", path, "--json")
	require.Equal(t, exitOK, code, stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &st))
	require.Len(t, st.Participants, 1, stdout)
	sid, err := strconv.ParseUint(strings.TrimPrefix(st.Participants[0].Session, "0x"), 16, 64)
	require.NoError(t, err)
	return int64(sid)
}

func TestIntegration_LockLossSignalsChildExits4(t *testing.T) {
	t.Parallel()
	c, conn, env := zkSetup(t)
	proxy := c.Proxy(t) // so that the harness learns the session's password
	viaProxy := []string{"ZKLOCK_SERVERS=" + proxy.ConnectString(), "ZKLOCK_SESSION_TIMEOUT=2s"}

	t.Run("child stops on SIGTERM", func(t *testing.T) {
		dir := t.TempDir()
		ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
		script := `trap 'echo TERM > "$1"; exit 0' TERM; echo ready > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, viaProxy, "lock", "loss1", "sh", "-c", script, ready, got)
		waitFile(t, ready)
		require.NoError(t, c.Expire(zklockSession(t, env, "loss1")))
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Equal(t, "TERM\n", waitFile(t, got))
		assert.Contains(t, p.stderr.String(), "lock lost")
		assert.Empty(t, children(t, conn, "/locks/loss1"))
	})
	t.Run("child ignoring SIGTERM is killed after --kill-grace", func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "ready")
		// The shell and its sleeps ignore SIGTERM; only SIGKILL, sent to the
		// whole process group, stops them.
		script := `trap '' TERM; echo $$ > "$0"; while :; do sleep 0.05; done`
		p := startZklock(t, viaProxy, "--kill-grace", "300ms", "lock", "loss2", "sh", "-c", script, ready)
		pgid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, ready)))
		require.NoError(t, err)
		require.NoError(t, c.Expire(zklockSession(t, env, "loss2")))
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		// Members killed after the shell are reaped by init, so give it a moment.
		require.Eventually(t, func() bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) },
			10*time.Second, 10*time.Millisecond, "the child's process group outlived zklock")
	})
	t.Run("no CMD", func(t *testing.T) {
		p, _, _ := holder(t, viaProxy, "loss3")
		require.NoError(t, c.Expire(zklockSession(t, env, "loss3")))
		assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Contains(t, p.stderr.String(), "lock lost")
	})
}

func TestIntegration_NoCMDPrintsNodeAndTokenReleasesOnSIGTERM(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	p, node, token := holder(t, env, "/nocmd/x")
	assert.True(t, strings.HasPrefix(node, "/nocmd/x/_c_"), node)
	assert.Equal(t, czxid(t, conn, node), token)
	assert.Equal(t, fmt.Sprintf("%s %d\n", node, token), p.stdout.String())

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Empty(t, children(t, conn, "/nocmd/x"), "node left behind")
}

func TestIntegration_SignalWhileWaitingExits3(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, node, _ := holder(t, env, "waiting")
	marker := filepath.Join(t.TempDir(), "ran")
	p := startZklock(t, env, "lock", "waiting", "sh", "-c", `touch "$0"`, marker)
	waitChildren(t, conn, "/locks/waiting", 2) // queued behind the holder

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Contains(t, p.stderr.String(), "not acquired: interrupted by SIGTERM")
	assert.NoFileExists(t, marker)
	assert.Equal(t, []string{filepath.Base(node)}, children(t, conn, "/locks/waiting"), "the waiter's node was left behind")
}

// jsonKeys returns the keys of a JSON object in document order.
func jsonKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestIntegration_StatusJSON(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, held, _ := holder(t, env, "st")
	startZklock(t, env, "lock", "st") // waits behind the holder
	names := waitChildren(t, conn, "/locks/st", 2)
	waiting := "/locks/st/" + names[0]
	if waiting == held {
		waiting = "/locks/st/" + names[1]
	}

	code, stdout, stderr := runZklock(t, env, "status", "st", "--json")
	require.Equal(t, exitOK, code, stderr)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &top))
	assert.Equal(t, []string{"path", "participants"}, jsonKeys(t, []byte(stdout)))
	var parts []json.RawMessage
	require.NoError(t, json.Unmarshal(top["participants"], &parts))
	require.Len(t, parts, 2)

	var want []string
	for i, node := range []string{held, waiting} {
		assert.Equal(t, []string{"node", "kind", "sequence", "fencing_token", "session", "holds", "data"},
			jsonKeys(t, parts[i]))
		data, stat, err := conn.Get(node)
		require.NoError(t, err)
		seq, err := strconv.Atoi(node[len(node)-10:])
		require.NoError(t, err)
		want = append(want, fmt.Sprintf(`{"node":%q,"kind":"lock","sequence":%d,"fencing_token":%d,"session":"0x%x","holds":%t,"data":%q}`,
			filepath.Base(node), seq, stat.Czxid, stat.EphemeralOwner, i == 0, data))
	}
	assert.Equal(t, `{"path":"/locks/st","participants":[`+strings.Join(want, ",")+`]}`, compactJSON(t, []byte(stdout)))

	// The table shows the same.
	code, stdout, stderr = runZklock(t, env, "status", "/locks/st")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.Equal(t, "/locks/st: 2 participant(s)", lines[0])
	assert.Equal(t, []string{"NODE", "KIND", "SEQUENCE", "FENCING_TOKEN", "SESSION", "HOLDS", "DATA"}, strings.Fields(lines[1]))
	assert.Equal(t, filepath.Base(held), strings.Fields(lines[2])[0])
	assert.Equal(t, "yes", strings.Fields(lines[2])[5])
	assert.Equal(t, filepath.Base(waiting), strings.Fields(lines[3])[0])
	assert.Equal(t, "-", strings.Fields(lines[3])[5])
	kind := strings.Index(lines[1], "KIND")
	for _, l := range lines[2:] {
		assert.Equal(t, "lock ", l[kind:kind+5], "columns not aligned:\n%s", stdout)
	}

	// A path that does not exist has no participants.
	code, stdout, stderr = runZklock(t, env, "status", "/no/such/lock", "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, `{"path":"/no/such/lock","participants":[]}`, compactJSON(t, []byte(stdout)))
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
