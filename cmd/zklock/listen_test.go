//go:build unix

package main

import (
	"encoding/json"
	"path"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines waits until the process has printed n lines on stdout and returns
// them; it fails if it printed more.
func (p *proc) lines(t *testing.T, n int) []string {
	t.Helper()
	var lines []string
	require.Eventually(t, func() bool {
		out := p.stdout.String()
		lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		return (strings.HasSuffix(out, "\n") && len(lines) >= n) || p.exited()
	}, 30*time.Second, 5*time.Millisecond, "waiting for %d lines of %v", n, p.cmd.Args[1:])
	require.Len(t, lines, n, "stdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
	return lines
}

// A listener prints the leader of the path, then each change, in order:
// no one, a latch leader, its successor (an id with a space), no one again,
// and a LeaderSelector leader; as text and as JSON lines. It creates
// nothing, and a signal ends it with exit 0.
func TestIntegration_ElectListen(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	const dir = "/el/listen" // does not exist yet
	text := startZklock(t, env, "elect", "--observe", dir)
	js := startZklock(t, env, "elect", "--observe", dir, "--json")
	require.Equal(t, "no leader", text.lines(t, 1)[0])
	js.lines(t, 1)
	ok, _, err := conn.Exists(dir)
	require.NoError(t, err)
	require.False(t, ok, "the listener created the path")

	type leader struct {
		node  string // full path
		token int64
		id    string
		kind  string
	}
	var want []*leader // nil: no leader
	want = append(want, nil)
	lead := func(p *proc, id, kind string) *leader {
		node, tok := nodeToken(t, p.firstLine(t))
		return &leader{node, tok, id, kind}
	}
	check := func() {
		t.Helper()
		n := len(want)
		l := want[n-1]
		line := text.lines(t, n)[n-1]
		if l == nil {
			assert.Equal(t, "no leader", line)
		} else {
			assert.Equal(t, "leader "+l.node+" "+strconv.FormatInt(l.token, 10)+" "+l.id, line)
		}
		var got listenJSON
		require.NoError(t, json.Unmarshal([]byte(js.lines(t, n)[n-1]), &got))
		assert.Equal(t, dir, got.Path)
		if l == nil {
			assert.Nil(t, got.Leader, "no leader")
			return
		}
		require.NotNil(t, got.Leader)
		assert.Equal(t, path.Base(l.node), got.Leader.Node)
		assert.Equal(t, l.token, got.Leader.FencingToken)
		assert.Equal(t, l.id, got.Leader.ID)
		assert.Equal(t, l.kind, got.Leader.Kind)
		seq, err := strconv.Atoi(l.node[len(l.node)-10:])
		require.NoError(t, err)
		assert.Equal(t, int32(seq), got.Leader.Sequence)
		assert.Regexp(t, `^0x[0-9a-f]+$`, got.Leader.Session)
	}

	a := startZklock(t, env, "elect", "--latch", dir, "--id", "a")
	want = append(want, lead(a, "a", "latch"))
	check()
	b := startZklock(t, env, "elect", "--latch", dir, "--id", "b b")
	waitChildren(t, conn, dir, 2)
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM)) // change 2: a's successor
	assert.Equal(t, exitOK, a.wait(t, 20*time.Second), a.stderr.String())
	want = append(want, lead(b, "b b", "latch"))
	check()
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM)) // change 3: no one
	assert.Equal(t, exitOK, b.wait(t, 20*time.Second), b.stderr.String())
	want = append(want, nil)
	check()
	c := startZklock(t, env, "elect", dir, "--id", "c") // change 4: a LeaderSelector
	want = append(want, lead(c, "c", "lock"))
	check()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, c.wait(t, 20*time.Second), c.stderr.String())
	want = append(want, nil)
	check()

	for sig, p := range map[syscall.Signal]*proc{syscall.SIGINT: text, syscall.SIGTERM: js} {
		require.NoError(t, p.cmd.Process.Signal(sig))
		assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Empty(t, p.stderr.String())
		p.lines(t, len(want)) // nothing more, nothing twice
	}
	assert.Empty(t, children(t, conn, dir))
}

// --timeout ends a listener with exit 0; a server that does not answer
// within it is exit 1.
func TestIntegration_ElectListenTimeout(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	p := startZklock(t, env, "--timeout", "1s", "elect", "--observe", "quiet")
	assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	assert.GreaterOrEqual(t, p.dur, time.Second)
	assert.Equal(t, "no leader\n", p.stdout.String())

	code, stdout, stderr := runZklock(t, nil, "--servers", silentAddr(t), "--timeout", "700ms", "elect", "--observe", "quiet")
	assert.Equal(t, exitError, code, stderr)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "no ZooKeeper server answered")
}

// With --namespace the listener follows PATH under the namespace and
// prints the caller's paths.
func TestIntegration_ElectListenNamespace(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	l := startZklock(t, env, "--namespace", "app", "elect", "--observe", "/el/ns")
	require.Equal(t, "no leader", l.lines(t, 1)[0])
	p := startZklock(t, env, "elect", "--latch", "/app/el/ns", "--id", "z")
	node, tok := nodeToken(t, p.firstLine(t))
	require.True(t, strings.HasPrefix(node, "/app/el/ns/"), node)
	assert.Equal(t, "leader "+strings.TrimPrefix(node, "/app")+" "+strconv.FormatInt(tok, 10)+" z", l.lines(t, 2)[1])
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Equal(t, "no leader", l.lines(t, 3)[2])
	require.NoError(t, l.cmd.Process.Signal(syscall.SIGHUP))
	assert.Equal(t, exitOK, l.wait(t, 20*time.Second), l.stderr.String())
}
