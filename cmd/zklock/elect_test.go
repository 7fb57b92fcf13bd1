//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// electLeader runs `zklock elect PATH --id ID` with no CMD and returns it
// with the node and token it printed once leader.
func electLeader(t *testing.T, env []string, path, id string) *proc {
	t.Helper()
	return startZklock(t, env, "elect", path, "--id", id)
}

func nodeToken(t *testing.T, line string) (string, int64) {
	t.Helper()
	node, tok, ok := strings.Cut(line, " ")
	require.True(t, ok, "want NODE TOKEN, got %q", line)
	token, err := strconv.ParseInt(tok, 10, 64)
	require.NoError(t, err)
	return node, token
}

func TestIntegration_ElectIdAndHandoff(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	a := electLeader(t, env, "jobs", "alpha")
	nodeA, tokA := nodeToken(t, a.firstLine(t))
	require.True(t, strings.HasPrefix(nodeA, "/locks/jobs/_c_"), nodeA)
	require.Contains(t, nodeA, "-lock-", "Curator LeaderSelector nodes are mutex nodes")
	data, _, err := conn.Get(nodeA)
	require.NoError(t, err)
	assert.Equal(t, "alpha", string(data), "the participant id is the node data")
	assert.Equal(t, tokA, czxid(t, conn, nodeA))

	b := electLeader(t, env, "jobs", "beta")
	waitChildren(t, conn, "/locks/jobs", 2)
	code, stdout, stderr := runZklock(t, env, "status", "jobs", "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `"data":\s*"alpha"`, stdout)
	assert.Regexp(t, `"data":\s*"beta"`, stdout)
	assert.False(t, strings.Contains(b.stdout.String(), "\n"), "beta leads while alpha does")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, a.wait(t, 20*time.Second), a.stderr.String())
	nodeB, tokB := nodeToken(t, b.firstLine(t))
	assert.Greater(t, tokB, tokA, "the next leader's token is larger")
	data, _, err = conn.Get(nodeB)
	require.NoError(t, err)
	assert.Equal(t, "beta", string(data))
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, b.wait(t, 20*time.Second), b.stderr.String())
	assert.Empty(t, children(t, conn, "/locks/jobs"), "node left behind")
}

func TestIntegration_ElectRunsCmdOnlyWhileLeader(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	log := filepath.Join(t.TempDir(), "log")
	script := `echo "start $1 $ZKLOCK_FENCING_TOKEN" >> "$0"; sleep 0.1; echo "end $1" >> "$0"; exit 3`
	const runs = 3
	procs := make([]*proc, runs)
	for i := range procs {
		procs[i] = startZklock(t, env, "elect", "/el/cmd", "--id", "p"+strconv.Itoa(i), "sh", "-c", script, log, strconv.Itoa(i))
	}
	for _, p := range procs {
		assert.Equal(t, 3, p.wait(t, 30*time.Second), "the child's status: %s", p.stderr.String())
	}
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 2*runs, string(b))
	last := int64(0)
	for i := 0; i < len(lines); i += 2 {
		f := strings.Fields(lines[i])
		require.Len(t, f, 3, lines[i])
		require.Equal(t, "start", f[0], "two leaders at once:\n%s", b)
		require.Equal(t, "end "+f[1], lines[i+1], "two leaders at once:\n%s", b)
		token, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err)
		require.Greater(t, token, last, "tokens must increase:\n%s", b)
		last = token
	}
	assert.Empty(t, children(t, conn, "/el/cmd"))
}

func TestIntegration_ElectRequeue(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"selector", "latch"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testElectRequeue(t, mode == "latch")
		})
	}
}

func testElectRequeue(t *testing.T, latch bool) {
	_, conn, env := zkSetup(t)
	log := filepath.Join(t.TempDir(), "log")
	elect := []string{"elect"}
	if latch {
		elect = append(elect, "--latch")
	}
	// Each term's CMD records its token and node and ends at once: zklock
	// campaigns again and runs it again, with a new, larger token.
	p := startZklock(t, env, append(elect, "/el/requeue", "--requeue", "--id", "again", "sh", "-c",
		`echo "$ZKLOCK_FENCING_TOKEN $ZKLOCK_NODE" >> "$0"`, log)...)
	var (
		tokens []int64
		nodes  []string
	)
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(log)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		tokens, nodes = tokens[:0], nodes[:0]
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				return false
			}
			tok, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return false
			}
			tokens, nodes = append(tokens, tok), append(nodes, f[1])
		}
		return len(tokens) >= 3
	}, 20*time.Second, 10*time.Millisecond)
	for i := 1; i < len(tokens); i++ {
		require.Greater(t, tokens[i], tokens[i-1])
	}
	for _, n := range nodes {
		assert.Equal(t, latch, strings.Contains(n, "-latch-"), "latch %v: node %s", latch, n)
	}
	require.False(t, p.exited(), "zklock stopped instead of campaigning again: %s", p.stderr.String())
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	code := p.wait(t, 20*time.Second)
	assert.Contains(t, []int{exitOK, exitNotAcquired, 128 + int(syscall.SIGTERM)}, code, p.stderr.String())
	require.Eventually(t, func() bool { return len(children(t, conn, "/el/requeue")) == 0 }, 20*time.Second, 10*time.Millisecond, "node left behind")

	// Without --requeue, one term only.
	code, _, stderr := runZklock(t, env, append(elect, "/el/requeue", "sh", "-c", `echo once >> "$0"`, log)...)
	assert.Equal(t, exitOK, code, stderr)
}
