//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/peers"
)

// statusOf runs `zklock ARGS... status PATH --json` and decodes it.
func statusOf(t *testing.T, env []string, args ...string) statusJSON {
	t.Helper()
	code, stdout, stderr := runZklock(t, env, append(args, "--json")...)
	require.Equal(t, exitOK, code, stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &st), stdout)
	return st
}

// With --namespace app, PATH /locks/x is the znode /app/locks/x: the lock
// excludes `zklock lock /app/locks/x` (and ZKLOCK_NAMESPACE does the same),
// and status shows the same queue either way, with the caller's paths.
func TestIntegration_NamespaceExcludesFullPath(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	ns := []string{"--namespace", "app"}
	a, nodeA, tokA := holder(t, append(env, "ZKLOCK_NAMESPACE=app"), "/locks/x")
	require.True(t, strings.HasPrefix(nodeA, "/locks/x/_c_"), "the node is printed without the namespace: %s", nodeA)
	assert.Equal(t, tokA, czxid(t, conn, "/app"+nodeA), "the znode is under /app")
	assert.Equal(t, []string{path.Base(nodeA)}, children(t, conn, "/app/locks/x"))
	assert.Empty(t, children(t, conn, "/locks/x"), "nothing outside the namespace")

	// The same znode without the namespace is taken; so is it with one.
	code, _, stderr := runZklock(t, env, "--try", "lock", "/app/locks/x", "true")
	assert.Equal(t, exitNotAcquired, code, "zklock lock /app/locks/x was not excluded: %s", stderr)
	code, _, stderr = runZklock(t, env, append(ns, "--try", "lock", "/locks/x", "true")...)
	assert.Equal(t, exitNotAcquired, code, stderr)
	// A different namespace is a different lock.
	code, _, stderr = runZklock(t, env, "--namespace", "other", "--try", "lock", "/locks/x", "true")
	assert.Equal(t, exitOK, code, stderr)

	// A waiter without the namespace queues behind a.
	b := startZklock(t, env, "lock", "/app/locks/x")
	waitChildren(t, conn, "/app/locks/x", 2)
	in := statusOf(t, env, append(ns, "status", "/locks/x")...)
	out := statusOf(t, env, "status", "/app/locks/x")
	assert.Equal(t, "/locks/x", in.Path, "status shows the caller's path")
	assert.Equal(t, "app", in.Namespace)
	assert.Equal(t, "/app/locks/x", out.Path)
	assert.Empty(t, out.Namespace)
	require.Len(t, in.Participants, 2)
	assert.Equal(t, out.Participants, in.Participants, "the same queue with and without the namespace")
	assert.Equal(t, path.Base(nodeA), in.Participants[0].Node)
	assert.True(t, in.Participants[0].Holds)
	assert.False(t, in.Participants[1].Holds)
	code, table, stderr := runZklock(t, env, append(ns, "status", "/locks/x")...)
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, table, "/locks/x (namespace app): 2 participant(s)\n")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, a.wait(t, 20*time.Second), a.stderr.String())
	nodeB, tokB := nodeToken(t, b.firstLine(t))
	assert.True(t, strings.HasPrefix(nodeB, "/app/locks/x/_c_"), nodeB)
	assert.Greater(t, tokB, tokA)
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, b.wait(t, 20*time.Second), b.stderr.String())
	assert.Empty(t, children(t, conn, "/app/locks/x"), "node left behind")
}

// Every verb takes --namespace: its node is under /NS, printed and passed
// to CMD without it, and CMD gets ZKLOCK_NAMESPACE.
func TestIntegration_NamespaceEveryHoldingVerb(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	cases := []struct {
		args   []string
		path   string // ZKLOCK_PATH
		dir    string // where the node is, as the caller sees it
		marker string
	}{
		{[]string{"lock", "v-lock"}, "/locks/v-lock", "/locks/v-lock", "-lock-"},
		{[]string{"read", "v-read"}, "/locks/v-read", "/locks/v-read", "__READ__"},
		{[]string{"write", "v-write"}, "/locks/v-write", "/locks/v-write", "__WRIT__"},
		{[]string{"semaphore", "v-sem", "--leases", "2"}, "/locks/v-sem", "/locks/v-sem/leases", "-lease-"},
		{[]string{"elect", "v-elect", "--id", "e"}, "/locks/v-elect", "/locks/v-elect", "-lock-"},
		{[]string{"elect", "--latch", "v-latch", "--id", "l"}, "/locks/v-latch", "/locks/v-latch", "-latch-"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "env")
			args := append([]string{"--namespace", "app/sub"}, tc.args...)
			args = append(args, "sh", "-c",
				`printf '%s\n%s\n%s\n%s\n' "$ZKLOCK_NAMESPACE" "$ZKLOCK_PATH" "$ZKLOCK_NODE" "$ZKLOCK_FENCING_TOKEN" > "$0.tmp" && mv "$0.tmp" "$0"; read -r _; exit 0`, out)
			var stdin *os.File
			p := startWith(t, append(env, "ZKLOCK_NAMESPACE=ignored"), func(cmd *exec.Cmd) {
				r, w, err := os.Pipe()
				require.NoError(t, err)
				cmd.Stdin, stdin = r, w
				t.Cleanup(func() { r.Close(); w.Close() })
			}, args...)
			lines := strings.Split(strings.TrimSuffix(waitFile(t, out), "\n"), "\n")
			require.Len(t, lines, 4)
			assert.Equal(t, "app/sub", lines[0], "ZKLOCK_NAMESPACE is the namespace used")
			assert.Equal(t, tc.path, lines[1], "ZKLOCK_PATH is the caller's")
			assert.Equal(t, tc.dir, path.Dir(lines[2]), "ZKLOCK_NODE is relative to the namespace")
			assert.Contains(t, path.Base(lines[2]), tc.marker)
			// While CMD runs, its node is under /app/sub, and the token is its czxid.
			assert.Equal(t, strconv.FormatInt(czxid(t, conn, "/app/sub"+lines[2]), 10), lines[3])
			assert.Empty(t, children(t, conn, tc.dir), "nothing outside the namespace")

			require.NoError(t, stdin.Close())
			assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
			assert.Empty(t, children(t, conn, "/app/sub"+tc.dir), "node left behind")
		})
	}
}

// revoke reads the node through the raw connection: with --namespace it
// must look under the namespace, so a lock path is refused and a holder's
// node is revoked.
func TestIntegration_NamespaceRevoke(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	ns := []string{"--namespace", "app"}
	p := startZklock(t, env, append(ns, "lock", "--revocable", "/r/x")...)
	node, _ := nodeToken(t, p.firstLine(t))
	require.True(t, strings.HasPrefix(node, "/r/x/_c_"), node)

	// A node-like name with children, found only under the namespace.
	_, err := conn.Create("/app/r/x/odd-lock-0000000001", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create("/app/r/x/odd-lock-0000000001/child", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	code, _, stderr := runZklock(t, env, append(ns, "revoke", "/r/x/odd-lock-0000000001")...)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "/r/x/odd-lock-0000000001 has 1 children")

	code, _, stderr = runZklock(t, env, append(ns, "revoke", node)...)
	assert.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stderr, "does not exist")
	assert.Equal(t, exitLost, p.wait(t, 20*time.Second), "the revocable holder did not see the request: %s", p.stderr.String())
	assert.Contains(t, p.stderr.String(), "revocation requested")
}

// A Curator client built with namespace("app") and zklock --namespace app
// name the same lock.
func TestIntegration_NamespaceCuratorPeer(t *testing.T) {
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		t.Parallel()
		c, conn, env := zkSetup(t)
		cur := g.CuratorNamespace(t, c.ConnectString(), 10*time.Second, "app")
		cur.Must(t, "mutex m /locks/cur")
		cur.Must(t, "acquire m")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ev, err := cur.WaitEvent(ctx, "m", "acquired")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(ev.Arg, "/locks/cur/_c_"), ev.Arg)

		code, _, stderr := runZklock(t, env, "--namespace", "app", "--try", "lock", "/locks/cur", "true")
		assert.Equal(t, exitNotAcquired, code, "Curator's lock did not exclude zklock's: %s", stderr)
		st := statusOf(t, env, "--namespace", "app", "status", "/locks/cur")
		require.Len(t, st.Participants, 1)
		assert.Equal(t, path.Base(ev.Arg), st.Participants[0].Node)

		p := startZklock(t, env, "--namespace", "app", "lock", "/locks/cur")
		waitChildren(t, conn, "/app/locks/cur", 2)
		cur.Must(t, "release m")
		node, _ := nodeToken(t, p.firstLine(t))
		assert.True(t, strings.HasPrefix(node, "/locks/cur/_c_"), node)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	})
}
