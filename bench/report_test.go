package bench

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// checkHTML parses the page at path as XML and checks that it is one
// self-contained document: no scripts, nothing fetched, links only to the
// page itself or the JSON beside it, and a chart for every workload of rep.
func checkHTML(t *testing.T, path string, rep *Report) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	d := xml.NewDecoder(f)
	d.Strict = true
	ids := map[string]bool{}
	svgIn := map[string]int{} // workload id -> <svg> elements inside it
	var stack []string        // ids of the open elements (or "")
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "not well-formed")
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
			}
			require.NotContains(t, []string{"script", "img", "link", "iframe", "object", "embed", "image"}, e.Name.Local)
			id := ""
			for _, a := range e.Attr {
				switch a.Name.Local {
				case "id":
					id = a.Value
					require.False(t, ids[id], "duplicate id %s", id)
					ids[id] = true
				case "src":
					t.Fatalf("%s has a src attribute: %s", e.Name.Local, a.Value)
				case "href":
					require.True(t, strings.HasPrefix(a.Value, "#") || a.Value == "bench.json", "link %s", a.Value)
				case "style":
					require.NotContains(t, a.Value, "url(")
				}
			}
			if e.Name.Local == "svg" {
				for _, open := range stack {
					if strings.HasPrefix(open, "w-") {
						svgIn[open]++
					}
				}
			}
			stack = append(stack, id)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				require.NotContains(t, string(e), "url(", "a fetch in inline CSS")
			}
		}
	}
	require.Equal(t, "html", root)
	require.Empty(t, stack)
	ws := rep.workloads()
	require.NotEmpty(t, ws)
	for _, w := range ws {
		require.True(t, ids["w-"+w.name], "no section for workload %s", w.name)
		require.Equal(t, 1, svgIn["w-"+w.name], "workload %s has no chart", w.name)
	}
	for _, id := range []string{"ratios", "goals", "herd", "rtt"} {
		require.True(t, ids[id], "no section %s", id)
	}
	require.Equal(t, len(rep.censusRows()) > 0, ids["census"], "the census section")
	if f := rep.Failover; f != nil {
		require.True(t, ids["failover"], "no failover section")
		for _, s := range f.summaries() {
			require.True(t, ids["f-"+s.Case], "no failover chart for %s", s.Case)
		}
	}
}

// TestReportHTML renders the page from a small fixed report and checks it.
func TestReportHTML(t *testing.T) {
	b, err := os.ReadFile("testdata/report.json")
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(b, &rep))
	want := []string{"uncontended", "contended", "inprocess", "uncontended-rtt2ms", "contended-rtt2ms",
		"inprocess-rtt2ms", "ensemble-uncontended", "ensemble-contended", "ensemble-inprocess"}
	var got []string
	for _, w := range rep.workloads() {
		got = append(got, w.name)
	}
	require.Equal(t, want, got)
	rep.Failover = &FailoverReport{SessionTimeout: time.Second, Tick: 100 * time.Millisecond, LossLimits: []string{"0"}}
	for i := range 6 {
		for _, c := range failoverCases {
			rep.Failover.Events = append(rep.Failover.Events,
				FailoverEvent{Case: c, Recipe: recipeZklockElection, Loss: "0ms", Event: i, GapMs: 5 + float64(i), Changes: 1, MovedMs: -1, Valid: true},
				FailoverEvent{Case: c, Recipe: recipeCuratorSelector, Event: i, GapMs: 9 + float64(i), Changes: 1, MovedMs: -1, Valid: true})
		}
	}
	rep.Records = append(rep.Records, Record{Target: ZklockMutex, Measure: censusPrefix + measureCont, Setup: Ensemble, RequestsPerHandoff: 5,
		Census: &CensusDetail{Reads: 3, Writes: 2, ByMember: map[string][2]float64{"leader": {1, 0.7}, "follower1": {2, 1.3}},
			Path: &PathCensus{Windows: 10, Waited: 1, Stages: 1, WaitedOps: map[string]float64{"getChildren2": 1}}}})
	path := t.TempDir() + "/bench.html"
	require.NoError(t, rep.WriteHTML(path, "bench.json"))
	checkHTML(t, path, &rep)
	page := rep.HTML("bench.json")
	for _, s := range []string{"follower1 2.00/1.30", "getChildren2=1.00", "curator-selector", "11.50 <small>[9.00, 14.00]</small>"} {
		require.Contains(t, page, s)
	}
	// Every peer's bar and every ratio is on the page.
	for _, s := range []string{ZklockMutex, CuratorMutex, GoZKLock, KazooLock, FloorPipelined, FloorListed,
		"against waiters", "against round trip"} {
		require.Contains(t, page, s)
	}
	for key, v := range rep.Ratios {
		w, p, _ := strings.Cut(key, " ")
		require.Contains(t, page, ">"+w+"<")
		require.Contains(t, page, ">"+p+"<")
		require.Contains(t, page, fmt.Sprintf(">%.2f<", v), key)
	}
	if dir := os.Getenv("BENCH_HTML_OUT"); dir != "" { // to look at the page
		require.NoError(t, rep.WriteHTML(dir+"/bench.html", "bench.json"))
	}
}
