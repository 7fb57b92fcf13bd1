package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/pgtest"
)

// TestMain runs the tests with pgtest.Run, so that the Postgres scenarios
// share one PostgreSQL server, started at the first of them and stopped
// when the tests end.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	CleanBuild()
	os.Exit(code)
}

// TestIntegration_Reliability runs the scenarios of RELIABILITY_MODE (smoke
// by default: a small, fast run of the same code; short for make reliability;
// soak for make soak; negative for make reliability-negative, which needs
// -tags zklock_negative). RELIABILITY_OUT names a directory for the table,
// the JSON report and the summary line.
func TestIntegration_Reliability(t *testing.T) {
	mode := Mode(os.Getenv("RELIABILITY_MODE"))
	if mode == "" {
		mode = "smoke"
	}
	var scs []*Scenario
	if mode == "negative" {
		if !NegativeBuild {
			t.Fatal("RELIABILITY_MODE=negative needs -tags zklock_negative")
		}
		scs = Negatives()
	} else {
		for _, sc := range Scenarios(mode) {
			if sc.Duration > 0 {
				scs = append(scs, sc)
			}
		}
	}
	if only := os.Getenv("RELIABILITY_ONLY"); only != "" {
		var keep []*Scenario
		for _, sc := range scs {
			for _, o := range strings.Split(only, ",") {
				if sc.Name == o || sc.Negative == o {
					keep = append(keep, sc)
				}
			}
		}
		scs = keep
	}
	if mode == "soak" {
		runSoak(t, scs)
		return
	}
	var results []Result
	for _, sc := range scs {
		name := sc.Name
		if sc.Negative != "" {
			name = sc.Negative + "_" + sc.Name
		}
		t.Run(name, func(t *testing.T) {
			r := Run(t, sc)
			results = append(results, r)
			judge(t, name, sc, r)
		})
	}
	writeReport(t, mode, results)
}

// seeAt returns where to look at the run's i-th example violation.
func seeAt(r Result, i int) string {
	if i < len(r.See) {
		return r.See[i]
	}
	return r.Timeline
}

// judge logs a run's result and fails t if the run violated a checker (a
// negative control: if it did not), reported errors or acquired nothing.
func judge(t *testing.T, name string, sc *Scenario, r Result) {
	t.Logf("%s: zk=%s acquisitions=%d faults=%d violations=%v store_losses=%d p99=%.1fms errors=%v", name, r.ZooKeeper, r.Acquisitions, r.Faults, r.Violations, r.StoreLosses, r.P99AcquireMs, r.Errors)
	if r.Database != nil {
		t.Logf("  database: %v", r.Database)
	}
	for i, v := range r.Examples {
		t.Logf("  %s: %s (see %s)", v.Checker, v.Detail, seeAt(r, i))
	}
	t.Logf("  timeline: %s", r.Timeline)
	switch {
	case sc.Negative != "" && r.Total == 0:
		t.Errorf("negative %s: missed (see %s)", sc.Negative, r.Timeline)
	case sc.Negative == "" && r.Total > 0:
		t.Errorf("%s: %d violations, first: %s: %s (see %s)", name, r.Total, r.Examples[0].Checker, r.Examples[0].Detail, seeAt(r, 0)) // Tally lists violations first
	}
	if len(r.Errors) > 0 && sc.Negative == "" {
		t.Errorf("%s: %v", name, r.Errors)
	}
	if r.ZooKeeper == "" || r.ZooKeeper == "unknown" {
		t.Errorf("%s: the servers did not say their release (srvr)", name)
	}
	if sc.Negative == "" && sc.InProcess == nil && r.Acquisitions == 0 {
		t.Errorf("%s: no acquisitions", name)
	}
}

// TestIntegration_C3CatchesWipedDataDir: C3 flags the token regression
// that wiping ZooKeeper's data directory causes (and nothing else fires).
func TestIntegration_C3CatchesWipedDataDir(t *testing.T) {
	r := Run(t, &Scenario{Name: "C3wipe", Title: "data directory wiped between holders", Servers: 1, Locks: 1,
		Session: 2 * time.Second, Duration: time.Minute, InProcess: WipedDataDir})
	require.Positive(t, r.Violations["C3"], "C3 missed the regression: %v", r.Examples)
	require.Equal(t, r.Violations["C3"], r.Total, "only C3 should fire: %v", r.Examples)
	require.Equal(t, 6, r.Acquisitions)
}

func writeReport(t *testing.T, mode Mode, rs []Result) {
	out := os.Getenv("RELIABILITY_OUT")
	acq, faults, viol, exposed := 0, 0, 0, 0
	for _, r := range rs {
		if r.Faults > 0 {
			exposed += r.Acquisitions
		}
		acq += r.Acquisitions
		faults += r.Faults
		if r.Negative == "" {
			viol += r.Total
		}
	}
	table := FormatTable(rs)
	t.Logf("\n%s", table)
	if out == "" {
		return
	}
	os.MkdirAll(out, 0o755)
	b, _ := json.MarshalIndent(map[string]any{"mode": mode, "acquisitions": acq, "faults": faults, "violations": viol, "fault_exposed_acquisitions": exposed, "scenarios": rs}, "", "  ")
	os.WriteFile(filepath.Join(out, "report.json"), b, 0o644)
	table += fmt.Sprintf("fault-exposed acquisitions: %d\n", exposed)
	os.WriteFile(filepath.Join(out, "table.txt"), []byte(table), 0o644)
	var neg string
	for _, r := range rs {
		if r.Negative != "" {
			if r.Total > 0 {
				neg += fmt.Sprintf("negative %s: caught (violations=%d)\n", r.Negative, r.Total)
			} else {
				neg += fmt.Sprintf("negative %s: missed\n", r.Negative)
			}
		}
	}
	os.WriteFile(filepath.Join(out, "negative.txt"), []byte(neg), 0o644)
	if err := WriteIndex(out, ReleaseTitle(fmt.Sprintf("zklock reliability %s", mode), rs), rs); err != nil {
		t.Errorf("index: %v", err)
	}
	os.WriteFile(filepath.Join(out, "summary.txt"), []byte(fmt.Sprintf("reliability: %sacquisitions=%d faults=%d violations=%d\n", ReleaseField(rs), acq, faults, viol)), 0o644)
}

// TestRecheckHistory re-runs the checkers on a kept history:
// RELIABILITY_RECHECK=dir (a scenario's directory under histories/).
func TestRecheckHistory(t *testing.T) {
	dir := os.Getenv("RELIABILITY_RECHECK")
	if dir == "" {
		t.Skip("RELIABILITY_RECHECK not set")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	evs, err := ReadFiles(files...)
	if err != nil {
		t.Fatal(err)
	}
	h := Analyze(evs)
	s := 2 * time.Second
	vs := CheckAll(h, nil, CheckConfig{PauseGrace: s + 3*time.Second, Recovery: 2*s + 5*time.Second, Idle: 2 * time.Second,
		LossLimit: s * 2 / 3, Session: s, Resume: time.Second})
	for _, v := range vs {
		t.Errorf("%s: %s", v.Checker, v.Detail)
	}
	t.Logf("%d acquisitions, %d violations", h.Acquisitions(), len(vs))
}
