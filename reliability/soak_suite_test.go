package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// runSoak is RELIABILITY_MODE=soak: scs round-robin for SOAK_BUDGET
// (default 4h), durations scaled to fit (never below make reliability's),
// each finished run appended to RELIABILITY_OUT/soak.jsonl, its history and
// timeline kept under RELIABILITY_KEEP/<name>/run-NNN, the index page
// rewritten. A soak.jsonl already there (a killed soak, same
// RELIABILITY_OUT) is resumed: its runs count against the budget and
// towards the summary.
func runSoak(t *testing.T, scs []*Scenario) {
	budget, err := ParseBudget(os.Getenv("SOAK_BUDGET"), 4*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("RELIABILITY_OUT")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	floors := map[string]time.Duration{}
	for _, sc := range Scenarios("short") {
		floors[sc.Name] = sc.Duration
	}
	k := NewSoak(scs, floors, budget)
	path := filepath.Join(out, "soak.jsonl")
	recs, err := ReadRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	k.Resume(recs)
	rjs, err := ReadRejudgements(path)
	if err == nil {
		recs, err = ApplyRejudgements(recs, rjs) // the summaries count re-judged runs with their later verdicts
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("soak: budget %v, scale %.3f, %d runs already in %s (%v spent)", budget, k.Scale, len(recs), path, k.Spent().Round(time.Second))
	for _, sc := range k.Scenarios() {
		t.Logf("  %-4s %v", sc.Name, sc.Duration)
	}
	for {
		sc, round, ok := k.Next()
		if !ok {
			break
		}
		name := fmt.Sprintf("%s#%03d", sc.Name, sc.Run)
		began := time.Now()
		var r Result
		finished := false
		t.Run(name, func(t *testing.T) {
			r = Run(t, sc)
			finished = true
			judge(t, name, sc, r)
		})
		if !finished { // the run itself failed (t.Fatal): it still cost its time
			r = Result{Name: sc.Name, Title: sc.Title, Violations: map[string]int{}, Errors: []string{"run did not finish (see the go test log)"}}
		}
		r.Seconds = time.Since(began).Seconds()
		rec := k.Done(sc, round, r)
		if err := AppendRecord(path, rec); err != nil {
			t.Fatalf("checkpoint: %v", err)
		}
		recs = append(recs, rec)
		rs := results(recs)
		if err := WriteIndex(out, ReleaseTitle("zklock soak", rs), rs); err != nil {
			t.Errorf("index: %v", err)
		}
		t.Logf("%s (round %d): %v spent of %v; %s", name, round, k.Spent().Round(time.Second), budget, SummaryLine(recs))
	}
	table, line := SoakTable(recs), SummaryLine(recs)
	for _, l := range StoreLines(recs) {
		line += "\n" + l
	}
	t.Logf("\n%s%s", table, line)
	if err := os.WriteFile(filepath.Join(out, "soak-summary.txt"), []byte(table+line+"\n"), 0o644); err != nil {
		t.Error(err)
	}
}
