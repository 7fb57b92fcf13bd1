package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// KeepDir returns where a run of sc keeps its history and timeline under
// root (RELIABILITY_KEEP): <name>, N3_S6 for a negative control, and
// <name>/run-007 for the soak's seventh run of a scenario.
func KeepDir(root string, sc *Scenario) string {
	name := sc.Name
	if sc.Negative != "" {
		name = sc.Negative + "_" + sc.Name
	}
	if sc.Run > 0 {
		return filepath.Join(root, name, fmt.Sprintf("run-%03d", sc.Run))
	}
	return filepath.Join(root, name)
}

// keepHistory copies the run's logs to KeepDir(RELIABILITY_KEEP) when that
// is set and writes the HTML timeline there (else into the run's temporary
// directory, so that every run renders one), recording in res where it is
// and where to look at each example violation.
func keepHistory(t testing.TB, sc *Scenario, tmp string, logs []string, h *History, vs []Violation, res *Result) {
	dir := tmp
	if root := os.Getenv("RELIABILITY_KEEP"); root != "" {
		dir = KeepDir(root, sc)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Errorf("keep history: %v", err)
			return
		}
		for _, l := range logs {
			b, err := os.ReadFile(l)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, filepath.Base(l)), b, 0o644)
			}
			if err != nil {
				t.Errorf("keep history: %v", err)
			}
		}
	}
	title := sc.Title
	if sc.Negative != "" {
		title = sc.Negative + " under " + title
	}
	p, err := WriteTimeline(dir, sc.Name, title, h, vs)
	if err != nil {
		t.Errorf("timeline: %v", err)
		return
	}
	res.Timeline = p
	res.See = res.See[:0]
	for _, v := range res.Examples {
		res.See = append(res.See, h.See(dir, v))
	}
}
