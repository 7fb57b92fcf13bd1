package bench

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/zktest"
)

var (
	full    = flag.Bool("bench.full", false, "run the full benchmark suite (make bench)")
	outJSON = flag.String("bench.json", "", "write the raw numbers of -bench.full here (and the HTML report beside them)")
	reps    = flag.Int("bench.reps", 0, "repetitions of -bench.full (0: the size's)")
	size    = flag.String("bench.size", "default", "size of -bench.full: default (make bench) or full (make bench-full)")
	only    = flag.String("bench.phase", "", "with -bench.full, run this phase alone: failover (no tables of the others), or crowd\n"+
		"(a leader latch of 1,000 candidates against 3: make bench runs it after the suite)")
	crowdSizes = flag.String("bench.crowd", "", "with -bench.phase crowd: the sizes, comma-separated (default 3,1000)")
	rev        = flag.String("bench.rev", "", "the code measured, recorded in the report")
	prev       = flag.String("bench.prev", "", "the previous run's raw numbers, for the intervals' honesty goal")
)

// serverOpts: ZooKeeper's own defaults where zktest's differ (tick 2s,
// containers swept every minute, the JVM's optimising compiler), and fsync
// on.
// BENCH_ZK_LOG=path appends the servers' logs to path.
func serverOpts(t *testing.T) []zktest.Option {
	opts := []zktest.Option{zktest.WithFsync(true), zktest.WithTickTime(2 * time.Second),
		zktest.WithContainerCheckInterval(time.Minute), zktest.WithHeap("512m"),
		zktest.WithJVMFlags("-XX:TieredStopAtLevel=4")}
	if path := os.Getenv("BENCH_ZK_LOG"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { _ = f.Close() })
		opts = append(opts, zktest.WithLogOutput(f))
	}
	return opts
}

// server starts the standalone server with a delaying proxy in front of
// it and, with ensemble, a 3-member ensemble beside it.
func server(t *testing.T, ensemble bool) Server {
	c := zktest.Start(t, serverOpts(t)...)
	p := c.Proxy(t)
	version, err := c.ServerVersion(0)
	require.NoError(t, err)
	srv := Server{
		Addr:       c.Servers()[0],
		Version:    version,
		Versions:   versionServers(t),
		FourLetter: func(cmd string) (string, error) { return c.FourLetter(0, cmd) },
		Delayed:    &Delayer{Addr: p.Addrs()[0], SetDelay: p.SetDelay},
	}
	if ensemble {
		e := zktest.StartEnsemble(t, serverOpts(t)...)
		leader, err := e.Leader()
		require.NoError(t, err)
		for i, a := range e.Servers() {
			if i != leader {
				srv.Ensemble = append(srv.Ensemble, a)
			}
		}
		srv.Ensemble = append(srv.Ensemble, e.Servers()[leader])
		order := append(slices.Clone(srv.Ensemble[:0:0]), srv.Ensemble...)
		srv.EnsembleFourLetter = func(i int, cmd string) (string, error) {
			return e.FourLetter(slices.Index(e.Servers(), order[i]), cmd)
		}
		srv.Failover = func() *FaultEnsemble { return faultEnsemble(t) }
	}
	return srv
}

// versionServers starts a standalone server of each release zktest knows
// (3.9 first, the ratios' numerator), with the same options.
func versionServers(t *testing.T) []VersionServer {
	var out []VersionServer
	for _, rel := range zktest.Versions() {
		c := zktest.Start(t, append(serverOpts(t), zktest.WithVersion(rel))...)
		v, err := c.ServerVersion(0)
		require.NoError(t, err)
		out = append(out, VersionServer{Release: rel, Version: v, Addr: c.Servers()[0]})
	}
	return out
}

// failoverTick is the failover ensemble's tickTime: short, so that short
// session timeouts are allowed (ZooKeeper's minimum is two ticks) and
// expiry, checked once a tick, is prompt.
const failoverTick = 100 * time.Millisecond

// faultEnsemble starts the failover phase's 3-member ensemble (fsync on).
func faultEnsemble(t *testing.T) *FaultEnsemble {
	opts := append(serverOpts(t), zktest.WithTickTime(failoverTick), zktest.WithContainerCheckInterval(time.Second), zktest.WithHeap("256m"))
	e := zktest.StartEnsemble(t, opts...)
	return &FaultEnsemble{Servers: e.Servers(), Tick: failoverTick, Leader: e.Leader,
		Stop: e.Stop, Start: e.Start, Kill: e.Kill, FourLetter: e.FourLetter}
}

// TestBench is `make bench`: the whole suite against a ZooKeeper of its own
// with fsync on. It only runs with -bench.full.
func TestBench(t *testing.T) {
	if !*full {
		t.Skip("the benchmark suite runs with -bench.full (make bench)")
	}
	cfg := DefaultConfig()
	switch *size {
	case "default":
	case "full":
		cfg = FullConfig()
	default:
		t.Fatalf("-bench.size %q: want default or full", *size)
	}
	if *reps > 0 {
		cfg.Reps = *reps
	}
	switch *only {
	case "":
	case "failover":
		rep, err := FailoverOnly(cfg, Server{Failover: func() *FaultEnsemble { return faultEnsemble(t) }}, os.Stdout)
		require.NoError(t, err)
		rep.Revision = *rev
		if *outJSON != "" {
			require.NoError(t, rep.WriteJSON(*outJSON))
		}
		rep.PrintFailover(os.Stdout)
		return
	case "crowd":
		cc := DefaultCrowd()
		if *crowdSizes != "" {
			cc.Sizes = nil
			for _, f := range strings.Split(*crowdSizes, ",") {
				n, err := strconv.Atoi(f)
				require.NoError(t, err, "-bench.crowd")
				cc.Sizes = append(cc.Sizes, n)
			}
		}
		// A tick of 200ms allows the 4s sessions and expires them promptly.
		c := zktest.Start(t, append(serverOpts(t), zktest.WithTickTime(200*time.Millisecond), zktest.WithHeap("1g"))...)
		_, err := Crowd(cc, c.Servers()[0], serverPID(c.Servers()[0]), os.Stdout)
		require.NoError(t, err)
		return
	default:
		t.Fatalf("-bench.phase %q: want failover or crowd", *only)
	}
	rep, err := Suite(cfg, server(t, true), os.Stdout)
	require.NoError(t, err)
	rep.Revision = *rev
	if *prev != "" {
		p, err := ReadPrevious(*prev)
		switch {
		case err == nil:
			rep.Previous = p
		case !errors.Is(err, fs.ErrNotExist):
			t.Logf("previous run %s not used: %v", *prev, err)
		}
	}
	if *outJSON != "" {
		require.NoError(t, rep.WriteJSON(*outJSON))
		require.NoError(t, rep.WriteHTML(strings.TrimSuffix(*outJSON, ".json")+".html", filepath.Base(*outJSON)))
	}
	rep.Print(os.Stdout)
}

// TestIntegration_BenchSmoke runs every measurement of every target
// briefly, so that a broken benchmark fails CI.
func TestIntegration_BenchSmoke(t *testing.T) {
	srv := server(t, true)
	cfg := Config{
		Reps: 1, Warm: 20 * time.Millisecond, Uncontended: 150 * time.Millisecond,
		Contended: time.Second, Contenders: 3, Goroutines: 4,
		Herd: []int{3}, AllocRuns: 5, Census: 300 * time.Millisecond, Held: 50,
		RTTs:             []time.Duration{2 * time.Millisecond},
		PhaseUncontended: 100 * time.Millisecond, PhaseContended: 500 * time.Millisecond,
		Failover: FailoverConfig{Events: 1, SessionTimeout: time.Second, LossLimits: []string{"0", "default"}, Quiet: 100 * time.Millisecond},
	}
	var log strings.Builder
	rep, err := Suite(cfg, srv, &log)
	require.NoError(t, err, log.String())

	checkMeasured(t, checkRecords(t, rep))
	checkRatioKeys(t, rep)
	checkCensus(t, rep)
	checkFailover(t, rep.Failover)
	checkReleases(t, rep, srv)
	checkPrinted(t, rep)
	dir := t.TempDir()
	require.NoError(t, rep.WriteJSON(dir+"/bench.json"))
	require.NoError(t, rep.WriteHTML(dir+"/bench.html", "bench.json"))
	checkHTML(t, dir+"/bench.html", rep)
	if out := os.Getenv("BENCH_HTML_OUT"); out != "" { // to look at the page
		require.NoError(t, rep.WriteJSON(out+"/smoke.json"))
		require.NoError(t, rep.WriteHTML(out+"/smoke.html", "smoke.json"))
	}
}

// checkRecords checks each record's figures and returns the "target
// measure" and "target measure setup rtt" keys seen.
func checkRecords(t *testing.T, rep *Report) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rep.Records {
		seen[r.Target+" "+r.Measure] = true
		seen[fmt.Sprintf("%s %s %s %g", r.Target, r.Measure, r.Setup, r.RTTms)] = true
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
			if r.Target == ZklockMutex || r.Target == GoZKLock { // Go targets run their largest herd twice
				require.NotZero(t, r.HeapPerWaiterAgain, "%s herd again", r.Target)
			}
		case measureAllocs:
			require.Positive(t, r.AllocsPerCycle, r.Target)
		case measureHeld:
			require.Equal(t, 50, r.Waiters)
			require.Positive(t, r.HeapPerHeld)
		case censusPrefix + measureUnc, censusPrefix + measureCont, censusPrefix + measureGorout:
			// Every acquire+release writes at least a create and a delete.
			require.GreaterOrEqual(t, r.RequestsPerHandoff, 2.0, "%s %s", r.Target, r.Measure)
		}
		// A 2 ms round trip shows: an uncontended cycle takes at least two.
		if r.Measure == measureUnc && r.RTTms == 2 {
			require.GreaterOrEqual(t, r.P50, 4*time.Millisecond, "%s at 2ms", r.Target)
		}
	}
	return seen
}

// checkMeasured: every target ran every measure it has, and the latency
// and ensemble phases ran every peer and floor in every workload.
func checkMeasured(t *testing.T, seen map[string]bool) {
	t.Helper()
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
		"floor-pipelined uncontended", "floor-listed contended", "zklock-mutex held",
	} {
		require.True(t, seen[want], "missing %s", want)
	}
	for _, setting := range []string{"standalone 2", "ensemble 0"} {
		for _, want := range []string{
			"zklock-mutex uncontended", "zklock-mutex contended", "zklock-mutex goroutines",
			"curator-mutex uncontended", "curator-mutex contended", "curator-mutex goroutines",
			"go-zookeeper-lock uncontended", "go-zookeeper-lock contended", "go-zookeeper-lock goroutines",
			"kazoo-lock uncontended", "kazoo-lock contended", "kazoo-lock goroutines",
			"floor-cycle uncontended", "floor-pipelined uncontended", "floor-handoff contended", "floor-listed contended",
		} {
			require.True(t, seen[want+" "+setting], "missing %s %s", want, setting)
		}
	}
}

// checkRatioKeys: the ratios of every setting are there.
func checkRatioKeys(t *testing.T, rep *Report) {
	t.Helper()
	for _, key := range []string{
		"uncontended zklock/curator", "uncontended zklock/gozk", "uncontended zklock/kazoo", "uncontended zklock/floor",
		"uncontended zklock/pipelined-floor", "contended zklock/curator", "contended zklock/listed-floor",
		"contended zklock/floor", "inprocess zklock/curator", "inprocess zklock/floor",
		"uncontended-rtt2ms zklock/curator", "uncontended-rtt2ms zklock/pipelined-floor", "contended-rtt2ms zklock/curator",
		"contended-rtt2ms zklock/listed-floor", "inprocess-rtt2ms zklock/curator", "inprocess-rtt2ms zklock/floor",
		"ensemble-contended zklock/curator", "ensemble-contended zklock/listed-floor", "ensemble-inprocess zklock/kazoo",
	} {
		require.Contains(t, rep.Ratios, key)
	}
}

// checkPrinted: the printed output ends with one RATIO line per ratio,
// then the FAILOVER lines, each of its format.
func checkPrinted(t *testing.T, rep *Report) {
	t.Helper()
	var out strings.Builder
	rep.Print(&out)
	t.Log("\n" + out.String())
	ratioLine := regexp.MustCompile(`^RATIO (\S+) (zklock/\S+|zk3\.9/zk3\.8) (\d+\.\d\d) \[(-inf|\d+\.\d\d), (\+inf|\d+\.\d\d)\]$`)
	failLine := regexp.MustCompile(`^FAILOVER (\S+) (\S+) p50=\d+\.\d\d p99=\d+\.\d\d changes=\d+ events=\d+( loss=\S+)?( session=\S+)?$`)
	require.True(t, strings.HasPrefix(out.String(), "ZooKeeper "+rep.ZooKeeper+", Curator "), "the first line names the releases")
	var ratioKeys []string
	failovers := 0
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if m := ratioLine.FindStringSubmatch(l); m != nil {
			require.Zero(t, failovers, "a RATIO line after the FAILOVER lines: %s", l)
			ratioKeys = append(ratioKeys, m[1]+" "+m[2])
			require.Contains(t, rep.Ratios, m[1]+" "+m[2], l)
		}
		if failLine.MatchString(l) {
			failovers++
		}
		require.False(t, strings.HasPrefix(l, "RATIO ") && !ratioLine.MatchString(l), "bad RATIO line %q", l)
		require.False(t, strings.HasPrefix(l, "FAILOVER ") && !failLine.MatchString(l), "bad FAILOVER line %q", l)
	}
	require.Len(t, ratioKeys, len(rep.Ratios))
	require.Len(t, rep.Failover.summaries(), failovers)
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// checkCensus: the census has a timeline's detail on both setups, with the
// ensemble's requests spread over its members.
func checkCensus(t *testing.T, rep *Report) {
	t.Helper()
	seen := map[string]bool{}
	for _, rec := range rep.censusRows() {
		c := rec.Census
		key := rec.Target + " " + rec.Setup + " " + rec.Measure
		seen[key] = true
		require.Positive(t, c.Writes, key) // a create and a delete at least
		require.NotNil(t, c.Path, key)
		require.Positive(t, c.Path.Windows, key)
		require.Positive(t, c.Path.Stages, key)
		if rec.Setup == Ensemble && rec.Measure == censusPrefix+measureCont {
			require.Len(t, c.ByMember, 3, key) // sessions spread over the members
		}
	}
	for _, want := range []string{
		"zklock-mutex standalone requests-uncontended", "zklock-mutex standalone requests-contended",
		"curator-mutex standalone requests-contended", "go-zookeeper-lock standalone requests-contended",
		"zklock-mutex ensemble requests-uncontended", "zklock-mutex ensemble requests-contended",
		"curator-mutex ensemble requests-contended", "go-zookeeper-lock ensemble requests-contended",
	} {
		require.True(t, seen[want], "no census %s", want)
	}
}

// checkFailover: every case ran every recipe, and the simple cases changed
// the leader once.
func checkFailover(t *testing.T, f *FailoverReport) {
	t.Helper()
	require.NotNil(t, f)
	want := map[string][]string{
		caseGraceful:   {recipeFloor, recipeZklockElection, recipeZklockLatch, recipeCuratorSelector, recipeCuratorLatch},
		caseKill9:      {recipeZklockElection, recipeZklockLatch, recipeCuratorSelector, recipeCuratorLatch},
		caseFollower:   {recipeZklockElection, recipeZklockLatch, recipeCuratorSelector, recipeCuratorLatch},
		caseLeaderKill: {recipeZklockElection, recipeZklockLatch, recipeCuratorSelector, recipeCuratorLatch},
	}
	got := map[string]bool{}
	for _, s := range f.summaries() {
		got[s.Case+" "+s.Recipe] = true
		require.Equal(t, 1, s.Events, "%s %s %s", s.Case, s.Recipe, s.Loss)
		require.Zero(t, s.Invalid, "%s %s %s: the leader's session was not on the member the fault hit", s.Case, s.Recipe, s.Loss)
		require.Zero(t, s.MaxOverlap, "%s %s %s: two leaders at once", s.Case, s.Recipe, s.Loss)
		if s.Case == caseGraceful || s.Case == caseKill9 {
			require.Equal(t, []float64{1}, s.Changes, "%s %s", s.Case, s.Recipe)
			require.Positive(t, s.Gaps[0], "%s %s", s.Case, s.Recipe)
		}
	}
	for c, rs := range want {
		for _, r := range rs {
			require.True(t, got[c+" "+r], "no failover %s %s", c, r)
		}
	}
}
