package containers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklock/zklock/reliability"
)

func TestMain(m *testing.M) {
	code := m.Run()
	reliability.CleanBuild()
	os.Exit(code)
}

// TestIntegration_ReliabilityContainers runs S18-S20 at RELIABILITY_MODE
// (smoke by default; short for make reliability-containers; soak for make
// soak; negative, with -tags zklock_negative, for the negative control N3
// under S18, which must be caught). RELIABILITY_ONLY=S18,... narrows the
// run; RELIABILITY_OUT names a directory for the table, the JSON report and
// the summary line, as in the reliability suite; SOAK_JSONL names make
// soak's checkpoint file, to which each run (negative controls aside) is
// appended.
func TestIntegration_ReliabilityContainers(t *testing.T) {
	mode := reliability.Mode(os.Getenv("RELIABILITY_MODE"))
	if mode == "" {
		mode = "smoke"
	}
	scs := Scenarios(mode)
	if mode == "negative" {
		if !reliability.NegativeBuild {
			t.Fatal("RELIABILITY_MODE=negative needs -tags zklock_negative")
		}
		scs = Negatives()
	}
	if only := os.Getenv("RELIABILITY_ONLY"); only != "" {
		var keep []*reliability.Scenario
		for _, sc := range scs {
			for _, o := range strings.Split(only, ",") {
				if sc.Name == o || sc.Negative == o {
					keep = append(keep, sc)
				}
			}
		}
		scs = keep
	}
	var results []reliability.Result
	for _, sc := range scs {
		name := sc.Name
		if sc.Negative != "" {
			name = sc.Negative + "_" + sc.Name
		}
		t.Run(name, func(t *testing.T) {
			r := reliability.Run(t, sc)
			results = append(results, r)
			if jsonl := os.Getenv("SOAK_JSONL"); jsonl != "" && sc.Negative == "" { // make soak's checkpoint
				if err := reliability.AppendRun(jsonl, sc, r); err != nil {
					t.Errorf("soak checkpoint %s: %v", jsonl, err)
				}
			}
			t.Logf("%s: acquisitions=%d faults=%d losses=%d violations=%v p99=%.1fms errors=%v", name, r.Acquisitions, r.Faults, r.Losses, r.Violations, r.P99AcquireMs, r.Errors)
			for _, v := range r.Examples {
				t.Logf("  %s: %s", v.Checker, v.Detail)
			}
			switch {
			case sc.Negative != "" && r.Total == 0:
				t.Errorf("negative %s: missed", sc.Negative)
			case sc.Negative == "" && r.Total > 0:
				t.Errorf("%s: %d violations", name, r.Total)
			}
			if len(r.Errors) > 0 && sc.Negative == "" {
				t.Errorf("%s: %v", name, r.Errors)
			}
			if r.Acquisitions == 0 {
				t.Errorf("%s: no acquisitions", name)
			}
			if r.Faults == 0 {
				t.Errorf("%s: no fault was injected", name)
			}
		})
	}
	table := reliability.FormatTable(results)
	t.Logf("\n%s", table)
	out := os.Getenv("RELIABILITY_OUT")
	if out == "" {
		return
	}
	acq, faults, viol := 0, 0, 0
	var neg string
	for _, r := range results {
		acq += r.Acquisitions
		faults += r.Faults
		if r.Negative == "" {
			viol += r.Total
		} else if r.Total > 0 {
			neg += fmt.Sprintf("negative %s under %s: caught (violations=%d)\n", r.Negative, r.Name, r.Total)
		} else {
			neg += fmt.Sprintf("negative %s under %s: missed\n", r.Negative, r.Name)
		}
	}
	os.MkdirAll(out, 0o755)
	b, _ := json.MarshalIndent(map[string]any{"mode": mode, "backend": "containers", "acquisitions": acq, "faults": faults, "violations": viol, "scenarios": results}, "", "  ")
	os.WriteFile(filepath.Join(out, "report.json"), b, 0o644)
	os.WriteFile(filepath.Join(out, "table.txt"), []byte(table), 0o644)
	os.WriteFile(filepath.Join(out, "negative.txt"), []byte(neg), 0o644)
	os.WriteFile(filepath.Join(out, "summary.txt"), []byte(fmt.Sprintf("reliability-containers: %sacquisitions=%d faults=%d violations=%d\n", reliability.ReleaseField(results), acq, faults, viol)), 0o644)
}
