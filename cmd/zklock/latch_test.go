//go:build unix

package main

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/peers"
)

// latchNode is a Curator LeaderLatch node name.
var latchNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-\d{10}$`)

// leaderScript logs "start ID TOKEN NODE PID" when CMD starts and "end ID"
// when it is sent SIGTERM (then exits 0); otherwise it runs forever.
const leaderScript = `echo "start $1 $ZKLOCK_FENCING_TOKEN $ZKLOCK_NODE $$" >> "$0"; ` +
	`trap 'echo "end $1" >> "$0"; exit 0' TERM; while :; do sleep 0.05; done`

// logLines waits until the log has n lines and returns them.
func logLines(t *testing.T, log string, n int) []string {
	t.Helper()
	var lines []string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(log)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		return len(lines) >= n
	}, 30*time.Second, 5*time.Millisecond, "waiting for %d lines in %s", n, log)
	require.Len(t, lines, n, "more lines than expected:\n%s", strings.Join(lines, "\n"))
	return lines
}

// startLine splits a leaderScript start line into its id, token, node
// and pid.
func startLine(t *testing.T, line string) (id string, token int64, node string, pid int) {
	t.Helper()
	f := strings.Fields(line)
	require.Len(t, f, 5, line)
	require.Equal(t, "start", f[0], line)
	token, err := strconv.ParseInt(f[2], 10, 64)
	require.NoError(t, err)
	pid, err = strconv.Atoi(f[4])
	require.NoError(t, err)
	return f[1], token, f[3], pid
}

// Three `zklock elect --latch` processes: only the leader runs its CMD; a
// leader that stops (SIGTERM, forwarded to CMD) hands over at once, one
// that is killed (with its CMD) hands over when its session expires; the
// nodes are Curator LeaderLatch nodes and the tokens increase.
func TestIntegration_ElectLatchNeverOverlapsAndHandsOver(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	log := filepath.Join(t.TempDir(), "log")
	const dir = "/el/latch"
	procs := map[string]*proc{}
	elect := func(id string) {
		procs[id] = startZklock(t, env, "elect", "--latch", dir, "--id", id, "sh", "-c", leaderScript, log, id)
	}
	elect("a")
	id, tokA, nodeA, _ := startLine(t, logLines(t, log, 1)[0])
	require.Equal(t, "a", id)
	assert.Equal(t, dir, path.Dir(nodeA))
	assert.Regexp(t, latchNode, path.Base(nodeA))
	assert.Equal(t, tokA, czxid(t, conn, nodeA))
	data, _, err := conn.Get(nodeA)
	require.NoError(t, err)
	assert.Equal(t, "a", string(data), "the id is the node data")

	elect("b")
	waitChildren(t, conn, dir, 2)
	elect("c")
	for _, c := range waitChildren(t, conn, dir, 3) {
		assert.Regexp(t, latchNode, c)
	}
	code, stdout, stderr := runZklock(t, env, "status", dir, "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `(?s)"kind":\s*"latch".*"data":\s*"a".*"data":\s*"b".*"data":\s*"c"`, stdout)
	logLines(t, log, 1) // b and c wait

	// a stops: the signal goes to its CMD, which ends; zklock exits with its
	// status and b, next in the queue, leads.
	require.NoError(t, procs["a"].cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, procs["a"].wait(t, 20*time.Second), procs["a"].stderr.String())
	lines := logLines(t, log, 3)
	assert.Equal(t, "end a", lines[1])
	id, tokB, nodeB, pidB := startLine(t, lines[2])
	require.Equal(t, "b", id)
	assert.Greater(t, tokB, tokA)
	assert.Regexp(t, latchNode, path.Base(nodeB))

	// b dies with its CMD (a crash): c leads once b's session expires.
	killed := time.Now()
	require.NoError(t, procs["b"].cmd.Process.Signal(syscall.SIGKILL))
	<-procs["b"].done
	if pgid, err := syscall.Getpgid(pidB); err == nil { // without a supervisor (not Linux), CMD outlives zklock
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	lines = logLines(t, log, 4)
	id, tokC, _, _ := startLine(t, lines[3])
	require.Equal(t, "c", id)
	assert.Greater(t, tokC, tokB)
	assert.GreaterOrEqual(t, time.Since(killed), zkSessionTimeout/2, "c led before b's session could expire")

	require.NoError(t, procs["c"].cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, procs["c"].wait(t, 20*time.Second), procs["c"].stderr.String())
	assert.Equal(t, "end c", logLines(t, log, 5)[4])
	assert.Empty(t, children(t, conn, dir), "node left behind")
}

// Leadership lost while CMD runs (the node deleted): CMD gets SIGTERM,
// zklock exits 4 and leaves nothing behind (the latch, which rejoined the
// queue after the loss, is closed), and the next participant leads.
func TestIntegration_ElectLatchLossStopsChildExits4(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	log := filepath.Join(t.TempDir(), "log")
	const dir = "/el/latch-loss"
	p := startZklock(t, env, "elect", "--latch", dir, "--id", "first", "sh", "-c", leaderScript, log, "first")
	_, _, node, _ := startLine(t, logLines(t, log, 1)[0])
	next := startZklock(t, env, "elect", "--latch", dir, "--id", "next")
	waitChildren(t, conn, dir, 2)

	require.NoError(t, conn.Delete(node, -1))
	assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Equal(t, "end first", logLines(t, log, 2)[1], "CMD was not signalled")
	assert.Contains(t, p.stderr.String(), "sending it SIGTERM")
	nodeNext, _ := nodeToken(t, next.firstLine(t))
	assert.Equal(t, []string{path.Base(nodeNext)}, waitChildren(t, conn, dir, 1), "the lost latch left a node")
	require.NoError(t, next.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, next.wait(t, 20*time.Second), next.stderr.String())
	assert.Empty(t, children(t, conn, dir))
}

// --timeout bounds the wait for leadership (exit 3, CMD not run, nothing
// left behind); the latch's flags that make no sense are usage errors.
func TestIntegration_ElectLatchTimeout(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	const dir = "/el/latch-timeout"
	leader := startZklock(t, env, "elect", "--latch", dir, "--id", "leader")
	leader.firstLine(t)
	marker := filepath.Join(t.TempDir(), "ran")
	code, _, stderr := runZklock(t, env, "--timeout", "1s", "elect", "--latch", dir, "sh", "-c", `touch "$0"`, marker)
	assert.Equal(t, exitNotAcquired, code, stderr)
	assert.Contains(t, stderr, "not acquired within 1s")
	assert.NoFileExists(t, marker)
	assert.Len(t, waitChildren(t, conn, dir, 1), 1, "the timed-out latch left its node")
	require.NoError(t, leader.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, leader.wait(t, 20*time.Second), leader.stderr.String())
}

// zklock elect --latch and Curator's LeaderLatch on the same path take
// turns and agree on the leader.
func TestIntegration_ElectLatchCuratorPeer(t *testing.T) {
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		t.Parallel()
		c, conn, env := zkSetup(t)
		const dir = "/el/latch-peer"
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cur := g.Curator(t, c.ConnectString(), 10*time.Second)
		cur.Must(t, "latch c1 "+dir+" curator-1")
		_, err := cur.WaitEvent(ctx, "c1", "leader")
		require.NoError(t, err)

		log := filepath.Join(t.TempDir(), "log")
		p := startZklock(t, env, "elect", "--latch", dir, "--id", "zk", "sh", "-c", leaderScript, log, "zk")
		waitChildren(t, conn, dir, 2)
		assert.NoFileExists(t, log, "zklock led while Curator's latch did")
		assert.Equal(t, "true", cur.Must(t, "haslatch c1"))

		cur.Must(t, "closelatch c1")
		_, _, node, _ := startLine(t, logLines(t, log, 1)[0])
		assert.Regexp(t, latchNode, path.Base(node))
		cur.Must(t, "latch c2 "+dir+" curator-2")
		waitChildren(t, conn, dir, 2)
		assert.Equal(t, "zk", cur.Must(t, "leaderid c2"), "Curator sees zklock's latch as the leader")
		assert.Equal(t, "false", cur.Must(t, "haslatch c2"))

		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
		_, err = cur.WaitEvent(ctx, "c2", "leader")
		require.NoError(t, err, "Curator's latch did not take over")
		assert.Equal(t, "true", cur.Must(t, "haslatch c2"))
	})
}
