package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestIntegration_Demo runs `make demo`'s script end to end (real ZooKeeper,
// real processes, SIGKILL and SIGSTOP) and checks what it shows: fencing
// tokens increase from leader to leader, the paused leader's stale write is
// rejected by the store, the demo ends by itself within a minute, and no
// process it started is left.
func TestIntegration_Demo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scripts/demo.sh (about 10s)")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	tmp := t.TempDir() // the demo's work dir goes under it: our mark for leftovers
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "demo.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.WaitDelay = 5 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	require.NoError(t, err, "demo failed\nstdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	require.Less(t, took, time.Minute, "the demo must end by itself within a minute")
	text := out.String()

	// Leaders in order, with their tokens: increasing, three different runners.
	leaders := regexp.MustCompile(`(?m)^\[(runner-\d)\] LEADER token=(\d+) `).FindAllStringSubmatch(text, -1)
	require.GreaterOrEqual(t, len(leaders), 3, text)
	ids := map[string]bool{}
	last := int64(-1)
	for _, l := range leaders {
		tok, err := strconv.ParseInt(l[2], 10, 64)
		require.NoError(t, err)
		require.Greater(t, tok, last, "tokens must increase across leaders:\n%s", text)
		last = tok
		ids[l[1]] = true
	}
	require.Len(t, ids, 3, "three runners led in turn:\n%s", text)

	// The stale write: the second leader (the paused one) writes with its old
	// token after the third leader's; the store rejects it.
	paused, stale := leaders[1][1], leaders[1][2]
	require.Regexp(t, `(?m)^\[store\] REJECT `+paused+` token=`+stale+` .*stale, highest seen is `+leaders[2][2]+`$`, text)
	require.Regexp(t, `(?m)^\[`+paused+`\] write token=`+stale+` .* REJECTED: stale token`, text)
	// Every write the store accepted carried the highest token seen so far.
	high := int64(-1)
	for _, m := range regexp.MustCompile(`(?m)^\[store\] ACCEPT \S+ token=(\d+) `).FindAllStringSubmatch(text, -1) {
		tok, _ := strconv.ParseInt(m[1], 10, 64)
		require.GreaterOrEqual(t, tok, high)
		high = tok
	}
	require.Contains(t, text, "DEMO OK")
	t.Logf("demo took %v; summary:\n%s", took, text[bytes.LastIndex(out.Bytes(), []byte("== summary")):])

	// Nothing left behind: no process mentions the demo's directory.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(tmp)) {
			t.Errorf("left behind: %s %q", p, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "the demo's work dir was not removed")
}
