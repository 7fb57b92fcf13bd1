//go:build unix

package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

const (
	deadOwnerA = "hostA/101/1700000000000"
	deadOwnerB = "hostB/202/1700000000000"
)

// libraryDeadlock makes two owners, each with two sessions (one holds,
// one waits), take the mutexes x and y under root in opposite orders.
func libraryDeadlock(t *testing.T, c *zktest.Cluster, root string) {
	t.Helper()
	conn := c.Connect(t, zkSessionTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	waiting := make(chan error, 2)
	t.Cleanup(func() {
		cancel()
		<-waiting
		<-waiting
	})
	parties := []struct{ owner, first, second string }{{deadOwnerA, "x", "y"}, {deadOwnerB, "y", "x"}}
	for _, o := range parties { // both hold their first lock ...
		holdLock(t, session(t, c), root+"/"+o.first, "holder", zklock.WithOwner(o.owner))
	}
	for _, o := range parties { // ... then queue for the other's, in another session
		waiter := session(t, c)
		m, err := zklock.NewMutex(waiter, root+"/"+o.second, zklock.WithData([]byte("waiter")), zklock.WithOwner(o.owner))
		require.NoError(t, err)
		go func() {
			h, err := m.Lock(ctx)
			if err == nil {
				_ = h.Release()
			}
			waiting <- err
		}()
	}
	waitChildren(t, conn, root+"/x", 2)
	waitChildren(t, conn, root+"/y", 2)
}

// deadlocksOf runs status --deadlocks ROOT --json.
func deadlocksOf(t *testing.T, env []string, root string) (int, deadlocksJSON, string) {
	t.Helper()
	code, stdout, stderr := runZklock(t, env, "status", "--deadlocks", root, "--json")
	var out deadlocksJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), "stdout %q stderr %q", stdout, stderr)
	return code, out, stderr
}

func owners(d lockview.Deadlock) []string {
	var os []string
	for _, p := range d.Owners {
		os = append(os, p.Owner)
	}
	return os
}

// TestIntegration_DeadlockLibrarySessions: two owners, two sessions each,
// two mutexes in opposite orders: status --deadlocks names the cycle, its
// locks, both sessions of each owner and their client addresses, and
// exits 5; a root without a cycle exits 0.
func TestIntegration_DeadlockLibrarySessions(t *testing.T) {
	t.Parallel()
	c, _, env := zkSetup(t)
	s := session(t, c)
	holdLock(t, s, "/locks/calm/x", "alone", zklock.WithOwner(deadOwnerA))
	libraryDeadlock(t, c, "/locks/dl")

	code, out, stderr := deadlocksOf(t, env, "/locks/calm")
	require.Equal(t, exitOK, code, stderr)
	require.Empty(t, out.Deadlocks)

	code, out, stderr = deadlocksOf(t, env, "/locks/dl")
	require.Equal(t, exitDeadlock, code, stderr)
	require.Len(t, out.Deadlocks, 1)
	d := out.Deadlocks[0]
	assert.Equal(t, []string{"/locks/dl/x", "/locks/dl/y"}, d.Locks)
	assert.Equal(t, []string{deadOwnerA, deadOwnerB}, owners(d))
	for _, p := range d.Owners {
		assert.Len(t, p.Sessions, 2, "%s: its holding and its waiting session are one owner", p.Owner)
		assert.Len(t, p.Holds, 1)
		require.Len(t, p.Waits, 1)
		assert.NotEqual(t, p.Owner, p.Waits[0].Behind)
		assert.NotEmpty(t, p.Clients, "client addresses (cons)")
		for _, cl := range p.Clients {
			assert.Contains(t, cl, "127.0.0.1:")
		}
	}

	// The default root is /locks; the table names the cycle too.
	code, stdout, stderr := runZklock(t, env, "status", "--deadlocks")
	require.Equal(t, exitDeadlock, code, stderr)
	assert.Contains(t, stdout, "deadlock 1: 2 owner(s) wait for each other in /locks/dl/x, /locks/dl/y")
	assert.Contains(t, stdout, "owner "+deadOwnerA)
	assert.Contains(t, stdout, "waits in /locks/dl/y")
}

// TestIntegration_DeadlockNestedCLI: `zklock lock a -- zklock lock b --
// CMD` and `zklock lock b -- zklock lock a -- CMD` deadlock; the inner
// zklocks carry their outer one's owner id (ZKLOCK_OWNER), so the cycle is
// seen across their four sessions.
func TestIntegration_DeadlockNestedCLI(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	dir := t.TempDir()
	nested := func(first, second, ready, other string) *proc {
		script := `touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done; exec "$3" lock "$4" -- sleep 600`
		return startZklock(t, env, "lock", "nest/"+first, "--", "sh", "-c", script, "sh",
			filepath.Join(dir, ready), filepath.Join(dir, other), zklockBin, "nest/"+second)
	}
	a := nested("a", "b", "a.ready", "b.ready")
	b := nested("b", "a", "b.ready", "a.ready")
	waitChildren(t, conn, "/locks/nest/a", 2)
	waitChildren(t, conn, "/locks/nest/b", 2)

	code, out, stderr := deadlocksOf(t, env, "/locks/nest")
	require.Equal(t, exitDeadlock, code, stderr)
	require.Len(t, out.Deadlocks, 1)
	d := out.Deadlocks[0]
	assert.Equal(t, []string{"/locks/nest/a", "/locks/nest/b"}, d.Locks)
	require.Len(t, d.Owners, 2)
	for _, p := range d.Owners {
		assert.Regexp(t, `^[^/]+/\d+/\d+$`, p.Owner, "the outer zklock's host/pid/start")
		assert.Len(t, p.Sessions, 2, "the outer and the inner zklock are one owner")
	}
	pids := []string{"/" + strconv.Itoa(a.cmd.Process.Pid) + "/", "/" + strconv.Itoa(b.cmd.Process.Pid) + "/"}
	for _, pid := range pids {
		assert.True(t, strings.Contains(d.Owners[0].Owner, pid) || strings.Contains(d.Owners[1].Owner, pid),
			"owner ids %v name the outer zklock %s", owners(d), pid)
	}
	for _, p := range []*proc{a, b} {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		p.wait(t, 20*time.Second)
	}
}

// TestIntegration_DeadlockUIBanner: the UI's pages show the deadlock in a
// banner, and /api/locks lists it.
func TestIntegration_DeadlockUIBanner(t *testing.T) {
	c, _, env := zkSetup(t)
	libraryDeadlock(t, c, "/locks/dl")
	_, base := startUI(t, env, "--root", "/locks")
	var body string
	require.Eventually(t, func() bool { // the view walks the root after it starts serving
		var code int
		code, body = get(t, strings.TrimPrefix(base, "http://"), "/api/locks", "")
		var o lockview.Overview
		return code == 200 && json.Unmarshal([]byte(body), &o) == nil && len(o.Deadlocks) == 1
	}, 20*time.Second, 50*time.Millisecond, "/api/locks lists no deadlock: %s", body)

	ctx := startBrowser(t)
	run(t, ctx, chromedp.Navigate(base+"/"))
	text := waitLive(t, ctx, "Deadlock:", deadOwnerA, deadOwnerB, "/locks/dl/x, /locks/dl/y")
	assert.Contains(t, text, "waits in /locks/dl/y behind "+deadOwnerB)
	run(t, ctx, chromedp.Navigate(base+"/lock/locks/dl/x"))
	waitLive(t, ctx, "Deadlock:", deadOwnerA)
}
