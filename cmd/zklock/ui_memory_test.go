package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// plainZklock is the zklock binary without the race detector (whose
// shadow memory would be measured too): the test binary's own when the
// tests do not run under -race, else one built for the test.
func plainZklock(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return zklockBin
	}
	bin := filepath.Join(t.TempDir(), "zklock")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// countUpdates reads an event stream to its end, counting its update
// events (their data lines may be of any length).
func countUpdates(r *bufio.Reader, n *atomic.Int64) {
	atStart := true
	for {
		line, more, err := r.ReadLine()
		if err != nil {
			return
		}
		if atStart && !more && string(line) == "event: update" {
			n.Add(1)
		}
		atStart = !more
	}
}

// Node data and live pages cost bounded memory: 30 lock nodes of 1 MB in
// one lock, its page open 20 times (event streams read as they come) and a
// change to it keep the real zklock ui process's peak RSS under 300 MiB.
func TestIntegration_UIMemory(t *testing.T) {
	const nodes, streams, mb = 30, 20, 1_000_000
	limit := int64(300 << 20)
	bin := plainZklock(t)
	_, conn, env := zkSetup(t)
	acl := zk.WorldACL(zk.PermAll)
	for _, p := range []string{"/locks", "/locks/big"} {
		_, err := conn.Create(p, nil, 0, acl)
		require.NoError(t, err)
	}
	for i := range nodes {
		data := []byte(fmt.Sprintf("worker-%02d ", i) + strings.Repeat("x", mb-10))
		_, err := conn.Create("/locks/big/_c_00000000-0000-4000-8000-000000000000-lock-", data, zk.FlagEphemeral|zk.FlagSequence, acl)
		require.NoError(t, err)
	}

	p := startWith(t, env, func(c *exec.Cmd) { c.Path, c.Args[0] = bin, bin }, "ui", "--listen", "127.0.0.1:0")
	line := p.firstLine(t)
	_, base, ok := strings.Cut(line, "serving ")
	require.True(t, ok, line)
	base, _, _ = strings.Cut(base, "/ ")
	require.Eventually(t, func() bool {
		o := getOverview(t, base+"/api/locks")
		return len(o.Locks) == 1 && o.Locks[0].Waiting == nodes-1
	}, 60*time.Second, 50*time.Millisecond, "the view never showed the lock")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	counts := make([]atomic.Int64, streams)
	for i := range streams {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?lock=/locks/big", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		wg.Go(func() {
			defer resp.Body.Close()
			countUpdates(bufio.NewReaderSize(resp.Body, 64<<10), &counts[i])
		})
	}
	each := func(n int64) func() bool {
		return func() bool {
			for i := range counts {
				if counts[i].Load() < n {
					return false
				}
			}
			return true
		}
	}
	require.Eventually(t, each(1), time.Minute, 10*time.Millisecond, "the first update of each stream")
	_, err := conn.Create("/locks/big/_c_00000000-0000-4000-8000-000000000000-lock-", []byte("late"), zk.FlagEphemeral|zk.FlagSequence, acl)
	require.NoError(t, err)
	require.Eventually(t, each(2), time.Minute, 10*time.Millisecond, "the update after the change, on each stream")

	peak := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("peak RSS of zklock ui: %.1f MiB (%d nodes of %d bytes, %d streams, one change)", float64(peak)/(1<<20), nodes, mb, streams)
	require.Less(t, peak, limit, "peak RSS %.1f MiB", float64(peak)/(1<<20))
}
