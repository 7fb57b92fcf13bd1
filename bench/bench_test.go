package bench

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/zktest"
)

var (
	full    = flag.Bool("bench.full", false, "run the full benchmark suite (make bench)")
	outJSON = flag.String("bench.json", "", "write the raw numbers of -bench.full here")
)

func server(t *testing.T) Server {
	// ZooKeeper's own defaults where zktest's differ (tick 2s, containers
	// swept every minute, the JVM's optimising compiler), and fsync on.
	c := zktest.Start(t, zktest.WithFsync(true), zktest.WithTickTime(2*time.Second),
		zktest.WithContainerCheckInterval(time.Minute), zktest.WithHeap("512m"),
		zktest.WithJVMFlags("-XX:TieredStopAtLevel=4"))
	return Server{
		Addr:       c.Servers()[0],
		FourLetter: func(cmd string) (string, error) { return c.FourLetter(0, cmd) },
	}
}

// TestBench is `make bench`: the whole suite against a ZooKeeper of its own
// with fsync on. It only runs with -bench.full.
func TestBench(t *testing.T) {
	if !*full {
		t.Skip("the benchmark suite runs with -bench.full (make bench)")
	}
	srv := server(t)
	rep, err := Suite(DefaultConfig(), srv, os.Stdout)
	require.NoError(t, err)
	if *outJSON != "" {
		require.NoError(t, rep.WriteJSON(*outJSON))
	}
	rep.Print(os.Stdout)
}

// TestIntegration_BenchSmoke runs every measurement of every target
// briefly, so that a broken benchmark fails CI.
func TestIntegration_BenchSmoke(t *testing.T) {
	srv := server(t)
	cfg := Config{
		Reps: 1, Warm: 20 * time.Millisecond, Uncontended: 150 * time.Millisecond,
		Contended: 300 * time.Millisecond, Contenders: 3, Goroutines: 4,
		Herd: []int{3}, AllocRuns: 5, Census: 100 * time.Millisecond,
	}
	var log strings.Builder
	rep, err := Suite(cfg, srv, &log)
	require.NoError(t, err, log.String())

	seen := map[string]bool{}
	for _, r := range rep.Records {
		seen[r.Target+" "+r.Measure] = true
		switch r.Measure {
		case measureUnc, measureCont, measureGorout:
			require.Positive(t, r.Ops, "%s %s", r.Target, r.Measure)
			require.Positive(t, r.PerSec, "%s %s", r.Target, r.Measure)
			require.Positive(t, r.P50, "%s %s", r.Target, r.Measure)
		case measureHerd:
			// Each of the 3 waiters deletes its node at least; the holder too.
			require.GreaterOrEqual(t, r.RequestsPerHandoff, 1.0, "%s herd", r.Target)
			require.Positive(t, r.NotificationsPerHandoff, "%s herd", r.Target)
			require.Positive(t, r.Requests["delete"], "%s herd", r.Target)
		case measureAllocs:
			require.Positive(t, r.AllocsPerCycle, r.Target)
		case censusPrefix + measureUnc, censusPrefix + measureCont, censusPrefix + measureGorout:
			// Every acquire+release writes at least a create and a delete.
			require.GreaterOrEqual(t, r.RequestsPerHandoff, 2.0, "%s %s", r.Target, r.Measure)
		}
	}
	for _, want := range []string{
		"zklock-mutex uncontended", "zklock-mutex contended", "zklock-mutex goroutines",
		"zklock-mutex herd", "zklock-mutex allocs",
		"go-zookeeper-lock contended", "go-zookeeper-lock herd",
		"floor-cycle uncontended", "floor-cycle+exists uncontended", "floor-handoff contended",
		"curator-mutex uncontended", "curator-mutex contended", "curator-mutex goroutines", "curator-mutex herd",
		"curator-rwwrite contended", "curator-semmutex contended",
		"kazoo-lock uncontended", "kazoo-lock contended", "kazoo-lock herd",
		"zklock-rwwrite contended", "zklock-semmutex contended",
		"zklock-mutex requests-uncontended", "zklock-mutex requests-contended", "zklock-mutex requests-goroutines",
		"curator-mutex requests-contended", "kazoo-lock requests-goroutines", "floor-cycle requests-uncontended",
	} {
		require.True(t, seen[want], "missing %s", want)
	}
	for _, c := range closing {
		require.Contains(t, rep.Ratios, c.line)
	}
	var out strings.Builder
	rep.Print(&out)
	t.Log("\n" + out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	for i, c := range closing {
		require.True(t, strings.HasPrefix(lines[len(lines)-4+i], c.line+" "), lines[len(lines)-4+i])
	}
	require.NoError(t, rep.WriteJSON(t.TempDir()+"/bench.json"))
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
