package bench

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// checkReleases: the report names the releases that ran (the servers' as
// they answer srvr, the peers' of internal/peers' Newest generation), and
// the release comparison ran zklock on a 3.9 and a 3.8 server in every
// repetition, with its ratios.
func checkReleases(t *testing.T, rep *Report, srv Server) {
	t.Helper()
	require.Equal(t, srv.Version, rep.ZooKeeper)
	if os.Getenv("ZKTEST_CLASSPATH") == "" && os.Getenv(zktest.EnvServers) == "" {
		want, err := zktest.SelectedVersion()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(rep.ZooKeeper, want+"."), "ZooKeeper %q, selected %s", rep.ZooKeeper, want)
	}
	require.Equal(t, peers.Newest().CuratorVersion, rep.Curator)
	require.Equal(t, peers.Newest().KazooVersion, rep.Kazoo) // as the driver itself reported it
	v := rep.Versions
	require.NotNil(t, v, "no release comparison")
	require.Len(t, v.Servers, 2)
	for i, rel := range []string{"3.9", "3.8"} {
		require.Equal(t, rel, v.Servers[i].Release)
		require.True(t, strings.HasPrefix(v.Servers[i].Version, rel+"."), "server %d runs %s", i, v.Servers[i].Version)
	}
	runs := map[string]int{}
	for _, r := range v.Records {
		require.Equal(t, ZklockMutex, r.Target)
		require.Positive(t, r.PerSec, "%s %s", r.Setup, r.Measure)
		require.Positive(t, r.ServerCPU, "%s %s: the server's CPU", r.Setup, r.Measure)
		runs[r.Setup+" "+r.Measure]++
	}
	for _, rel := range []string{"3.9", "3.8"} {
		for _, m := range versionMeasures {
			require.Equal(t, rep.Config.Reps, runs[rel+" "+m], "%s %s", rel, m)
		}
	}
	require.Contains(t, rep.Ratios, "uncontended zk3.9/zk3.8")
	require.Contains(t, rep.Ratios, "contended zk3.9/zk3.8")
}

// versionReport is a fixed report with a release comparison of reps
// repetitions, 3.9 at twice 3.8's throughput.
func versionReport(t *testing.T, reps int) *Report {
	t.Helper()
	b, err := os.ReadFile("testdata/report.json")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(b, &rep))
	rep.Config.Reps = reps
	rep.ZooKeeper, rep.Curator, rep.Kazoo = "3.9.6", "5.7.1", "2.11.0"
	v := &VersionReport{Servers: []VersionServer{{Release: "3.9", Version: "3.9.6"}, {Release: "3.8", Version: "3.8.0"}}}
	for i := range reps {
		for j, s := range v.Servers {
			for _, m := range versionMeasures {
				per := float64(1000*(2-j) + 10*i)
				v.Records = append(v.Records, Record{Target: ZklockMutex, Measure: m, Setup: s.Release, Rep: i,
					Run: &Run{Ops: int(per), Elapsed: time.Second, PerSec: per, P50: time.Millisecond, P99: 3 * time.Millisecond, ServerCPU: 0.5}})
			}
		}
	}
	rep.Versions = v
	rep.Intervals = ratioIntervals(rep.Records)
	rep.addVersionRatios()
	return &rep
}

// TestReportReleases: the printed report starts with the releases that
// ran, and the release comparison's table and RATIO lines are printed and
// on the page.
func TestReportReleases(t *testing.T) {
	rep := versionReport(t, 6)
	var out strings.Builder
	rep.Print(&out)
	lines := strings.Split(out.String(), "\n")
	require.Equal(t, "ZooKeeper 3.9.6, Curator 5.7.1, kazoo 2.11.0; release comparison: zklock on ZooKeeper 3.9.6 and 3.8.0", lines[0])
	text := out.String()
	require.Contains(t, text, "\nZooKeeper releases, zklock's mutex")
	require.Regexp(t, `(?m)^ +ZooKeeper 3\.9\.6 +20\d\d +1\.00 +3\.00 +0\.50 +20\d\d `, text)
	require.Regexp(t, `(?m)^ +ZooKeeper 3\.8\.0 +10\d\d `, text)
	for _, k := range []string{"uncontended zk3.9/zk3.8", "contended zk3.9/zk3.8"} {
		iv := rep.Intervals[k]
		require.InDelta(t, 1.95, iv.X, 0.05, k)
		require.Contains(t, text, "\nRATIO "+k+" "+iv.String()+"\n")
	}
	// After the peers' RATIO lines.
	require.Greater(t, strings.Index(text, "RATIO uncontended zk3.9/zk3.8"), strings.LastIndex(text, "RATIO inprocess"))

	page := rep.HTML("bench.json")
	require.Contains(t, page, `<p id="releases">ZooKeeper 3.9.6, Curator 5.7.1, kazoo 2.11.0; release comparison: zklock on ZooKeeper 3.9.6 and 3.8.0.</p>`)
	require.Contains(t, page, `<h2 id="versions">`)
	require.Contains(t, page, ">zk3.9/zk3.8<")
	path := t.TempDir() + "/bench.html"
	require.NoError(t, rep.WriteHTML(path, "bench.json"))
	checkHTML(t, path, rep)
}

// A report without the comparison (an older run's JSON, servers of one
// release) still names what it knows.
func TestReportReleasesUnknown(t *testing.T) {
	rep := &Report{}
	require.Equal(t, "ZooKeeper of unknown release", rep.releaseLine())
	rep.Versions = &VersionReport{Servers: []VersionServer{{Release: "3.9", Version: "3.9.6"}}}
	require.Empty(t, rep.Versions.intervals())
	require.Equal(t, "ZooKeeper of unknown release", rep.releaseLine())
}
