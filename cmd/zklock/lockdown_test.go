//go:build unix

package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// unreadableNode queues, in dir (made world-readable if missing), an
// ephemeral sequential node of conn's session named name+"<seq>" that only
// alice (digest) may use, and returns its path.
func unreadableNode(t *testing.T, conn *zk.Conn, dir, name string) string {
	t.Helper()
	worldDirs(t, conn, dir)
	node, err := conn.Create(dir+"/"+name, []byte("alice"), zk.FlagEphemeral|zk.FlagSequence,
		zk.DigestACL(zk.PermAll, "alice", "secret"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Delete(node, -1) })
	return node
}

// worldDirs makes dir and its missing parents, open to all.
func worldDirs(t *testing.T, conn *zk.Conn, dir string) {
	t.Helper()
	for p := ""; p != dir; {
		next := dir
		if i := strings.Index(dir[len(p)+1:], "/"); i >= 0 {
			next = dir[:len(p)+1+i]
		}
		p = next
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			require.NoError(t, err)
		}
	}
}

const protectedUUID = "_c_5d1e0c4a-7b1f-4c2e-9a0b-3c6f1e2d4a5b-"

// Every waiting verb behind a node it may not read exits 1 at once, naming
// the node and the permission: it used to list and read again in a tight
// loop until --timeout (exit 3), or for ever without one.
func TestIntegration_WaitBehindUnreadableNodeExits1(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	cases := []struct {
		name, mark, sub string
		args            []string
	}{
		{"lock", "lock-", "", []string{"lock"}},
		{"read", "__WRIT__", "", []string{"read"}},
		{"write", "__READ__", "", []string{"write"}},
		{"semaphore", "lock-", "/locks", []string{"semaphore", "--leases", "1"}},
		{"elect", "lock-", "", []string{"elect"}},
		{"latch", "latch-", "", []string{"elect", "--latch"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := "/locks/prot-" + tc.name
			node := unreadableNode(t, conn, dir+tc.sub, protectedUUID+tc.mark)
			args := append([]string{"--timeout", "8s"}, tc.args...)
			start := time.Now()
			code, _, stderr := runZklock(t, env, append(args, dir, "--", "true")...)
			took := time.Since(start)
			t.Logf("%s: exit %d after %v: %s", tc.name, code, took, stderr)
			require.Equal(t, exitError, code, stderr)
			require.Contains(t, stderr, "not authorized")
			require.Contains(t, stderr, node)
			require.Less(t, took, 5*time.Second)
		})
	}
}

// elect --listen on a path it may not read ends with the reason and exit 1;
// status and ls show the unreadable participant as such, and go on.
func TestIntegration_ObserveUnreadableNode(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	const dir = "/locks/unread"
	node := unreadableNode(t, conn, dir, protectedUUID+"lock-")
	_, err := conn.Create(dir+"/"+protectedUUID+"lock-", []byte("bob"), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	start := time.Now()
	code, stdout, stderr := runZklock(t, env, "--timeout", "20s", "elect", "--observe", dir)
	took := time.Since(start)
	t.Logf("elect --listen: exit %d after %v: %q %q", code, took, stdout, stderr)
	require.Equal(t, exitError, code, stderr)
	require.Contains(t, stderr, "not authorized")
	require.Contains(t, stderr, node)
	require.Less(t, took, 5*time.Second)

	code, stdout, stderr = runZklock(t, env, "status", dir)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "2 participant(s)")
	require.Contains(t, stdout, "(unreadable: not authorized")
	require.Contains(t, stdout, "bob", "the readable participant is shown")

	code, stdout, stderr = runZklock(t, env, "status", dir, "--json")
	require.Equal(t, exitOK, code, stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &st))
	require.Len(t, st.Participants, 2)
	require.Contains(t, st.Participants[0].Error, "not authorized")
	require.Empty(t, st.Participants[1].Error)

	code, stdout, stderr = runZklock(t, env, "--timeout", "20s", "ls", "--root", "/locks")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "(unreadable)")
	require.Contains(t, stdout, "cannot be read")
	require.Contains(t, stdout, "READ")
}

// Node data with C1 controls and bidi overrides reaches the terminal
// escaped in status (table and JSON) and elect --listen (line and JSON).
func TestIntegration_HostileDataQuoted(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	const dir = "/locks/hostile"
	worldDirs(t, conn, dir)
	const data = "id\u009b2J\u202egnp.exe"
	_, err := conn.Create(dir+"/"+protectedUUID+"lock-", []byte(data), zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for _, args := range [][]string{
		{"status", dir}, {"status", dir, "--json"},
		{"--timeout", "1s", "elect", "--observe", dir}, {"--timeout", "1s", "elect", "--observe", dir, "--json"},
	} {
		code, stdout, stderr := runZklock(t, env, args...)
		require.Equal(t, exitOK, code, "%v: %s", args, stderr)
		require.Contains(t, stdout, "id", args)
		for _, r := range stdout {
			require.False(t, r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r < 0x20 && r != '\n' && r != '\t',
				"%v: %q in %q", args, r, stdout)
		}
	}
}
