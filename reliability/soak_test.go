package reliability

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func soakScenarios() ([]*Scenario, map[string]time.Duration) {
	s := time.Second
	scs := []*Scenario{
		{Name: "A", Servers: 1, Duration: 60 * s},  // overhead 10 s
		{Name: "B", Servers: 3, Duration: 120 * s}, // overhead 25 s
		{Name: "C", Servers: 1, Duration: 300 * s},
	}
	return scs, map[string]time.Duration{"A": 20 * s, "B": 30 * s, "C": 30 * s}
}

// run drives a soak as the suite does, each run costing exactly its
// estimate, and returns the names run.
func run(k *Soak, recs *[]SoakRecord) []string {
	var names []string
	for {
		sc, round, ok := k.Next()
		if !ok {
			return names
		}
		names = append(names, sc.Name)
		r := Result{Name: sc.Name, Seconds: k.Estimate(sc).Seconds(), Acquisitions: 10, Faults: len(names) % 2}
		*recs = append(*recs, k.Done(sc, round, r))
	}
}

func TestSoakFullDurationsRepeatRoundRobin(t *testing.T) {
	scs, floors := soakScenarios()
	// One round at full durations: 60+10 + 120+25 + 300+10 = 525 s.
	k := NewSoak(scs, floors, 1200*time.Second)
	require.Equal(t, 1.0, k.Scale)
	var recs []SoakRecord
	names := run(k, &recs)
	// 1200 s: two rounds (1050 s), then nothing else fits in 150 s but
	// B (145 s) and after it A does not fit (5 s left).
	require.Equal(t, []string{"A", "B", "C", "A", "B", "C", "A"}, names[:7])
	require.LessOrEqual(t, k.Spent(), k.Budget)
	require.Equal(t, []int{1, 1, 1, 2, 2, 2, 3}, rounds(recs)[:7])
	for i, r := range recs {
		require.Equal(t, i+1, r.Seq)
	}
}

func rounds(recs []SoakRecord) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.Round)
	}
	return out
}

func TestSoakScalesDurationsToFit(t *testing.T) {
	scs, floors := soakScenarios()
	k := NewSoak(scs, floors, 300*time.Second)
	require.Less(t, k.Scale, 1.0)
	var total time.Duration
	for _, sc := range k.Scenarios() {
		require.GreaterOrEqual(t, sc.Duration, floors[sc.Name], sc.Name)
		total += sc.Duration + Overhead(sc)
	}
	require.LessOrEqual(t, total, 300*time.Second+3*time.Second) // rounding to seconds
	require.Greater(t, total, 250*time.Second, "the scale should use the budget")
	require.Equal(t, 120*time.Second, scs[1].Duration, "the caller's scenarios are not changed")
	var recs []SoakRecord
	require.Equal(t, []string{"A", "B", "C"}, run(k, &recs))
}

func TestSoakBudgetBelowTheFloors(t *testing.T) {
	scs, floors := soakScenarios()
	k := NewSoak(scs, floors, 60*time.Second) // A: 30 s, B: 55 s, C: 40 s
	for _, sc := range k.Scenarios() {
		require.Equal(t, floors[sc.Name], sc.Duration)
	}
	var recs []SoakRecord
	require.Equal(t, []string{"A", "A"}, run(k, &recs)) // 30 s left after A: only A fits
	k = NewSoak(scs, floors, 5*time.Second)
	_, _, ok := k.Next()
	require.False(t, ok)
}

func TestSoakUsesMeasuredCost(t *testing.T) {
	scs, floors := soakScenarios()
	k := NewSoak(scs, floors, 2000*time.Second)
	sc, round, ok := k.Next()
	require.True(t, ok)
	require.Equal(t, 1, sc.Run)
	k.Done(sc, round, Result{Name: "A", Seconds: 500})
	require.Equal(t, 500*time.Second, k.Estimate(sc))
	require.Equal(t, 500*time.Second, k.Spent())
}

func TestSoakResumesFromCheckpoint(t *testing.T) {
	scs, floors := soakScenarios()
	path := filepath.Join(t.TempDir(), "soak.jsonl")
	k := NewSoak(scs, floors, 1200*time.Second)
	for range 4 { // A B C A, then the soak is killed
		sc, round, ok := k.Next()
		require.True(t, ok)
		require.NoError(t, AppendRecord(path, k.Done(sc, round, Result{Name: sc.Name, Seconds: k.Estimate(sc).Seconds(), Acquisitions: 5, Faults: 1})))
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"seq":5,"round":2,"name":"B","acq`) // torn by the kill
	require.NoError(t, err)
	require.NoError(t, f.Close())

	recs, err := ReadRecords(path)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	k2 := NewSoak(scs, floors, 1200*time.Second)
	k2.Resume(recs)
	require.Equal(t, k.Spent(), k2.Spent())
	sc, round, ok := k2.Next()
	require.True(t, ok)
	require.Equal(t, "B", sc.Name)
	require.Equal(t, 2, sc.Run)
	require.Equal(t, 2, round)
	r := k2.Done(sc, round, Result{Name: "B", Seconds: 145})
	require.Equal(t, 5, r.Seq)
	sc, round, _ = k2.Next()
	require.Equal(t, "C", sc.Name)
	k2.Done(sc, round, Result{Name: "C", Seconds: 310})
	sc, round, _ = k2.Next()
	require.Equal(t, "A", sc.Name)
	require.Equal(t, 3, sc.Run)
	require.Equal(t, 3, round)

	// The container suite appends its runs after the soak's (AppendRun);
	// a soak resumed after them goes on after the last scheduled run.
	path2 := filepath.Join(t.TempDir(), "soak.jsonl")
	for _, r := range recs { // A B C A
		require.NoError(t, AppendRecord(path2, r))
	}
	require.NoError(t, AppendRun(path2, &Scenario{Name: "S18", Duration: time.Minute}, Result{Name: "S18", Seconds: 70}))
	recs, err = ReadRecords(path2)
	require.NoError(t, err)
	require.Len(t, recs, 5)
	k3 := NewSoak(scs, floors, 10*time.Hour) // every scenario fits: the position alone decides
	k3.Resume(recs)
	sc, round, ok = k3.Next()
	require.True(t, ok)
	require.Equal(t, "B", sc.Name, "resumed after A, the last scheduled run, not from the start")
	require.Equal(t, 2, round)

	missing, err := ReadRecords(filepath.Join(t.TempDir(), "none.jsonl"))
	require.NoError(t, err)
	require.Empty(t, missing)
}

func TestUpper95(t *testing.T) {
	require.Equal(t, 1.0, Upper95(0, 0))
	// Rule of three: about 3/n for v = 0.
	u := Upper95(1_000_000, 0)
	require.InDelta(t, 2.9957e-6, u, 1e-9)
	require.InDelta(t, 1-math.Pow(0.05, 1.0/1e6), u, 1e-15)
	// One violation in 1000 trials: Clopper-Pearson gives 0.004735.
	require.InDelta(t, 0.004735, Upper95(1000, 1), 2e-6)
	// Five in 100: 0.1023 (exact binomial bound).
	require.InDelta(t, 0.1023, Upper95(100, 5), 5e-4)
	require.Equal(t, 1.0, Upper95(3, 3))
}

func TestSoakSummaryAndTable(t *testing.T) {
	recs := []SoakRecord{
		{Result: Result{Name: "S1", Title: "no faults", Acquisitions: 1000, Seconds: 60, Violations: map[string]int{}}},
		{Result: Result{Name: "S5", Title: "pause", Acquisitions: 400, Faults: 20, Losses: 3, Seconds: 100, P99AcquireMs: 12.5, Violations: map[string]int{}}},
		{Result: Result{Name: "S5", Title: "pause", Acquisitions: 600, Faults: 30, Losses: 4, Seconds: 100, P99AcquireMs: 20, Violations: map[string]int{}}},
		{Result: Result{Name: "S17", Negative: "N5", Title: "deleted", Acquisitions: 50, Faults: 5, Total: 9, Violations: map[string]int{"C1": 9}}},
	}
	line := SummaryLine(recs)
	require.Equal(t, "soak: acquisitions=2000 fault_exposed=1000 faults=50 violations=0 upper95=0.00299", line)
	tab := SoakTable(recs)
	lines := strings.Split(strings.TrimSpace(tab), "\n")
	require.Len(t, lines, 5, tab) // header, S1, S5, N5_S17, total
	require.Regexp(t, `^S5\s+pause\s+2\s+200\s+1000\s+1000\s+50\s+7\s+0\s+0 `, lines[2])
	require.Contains(t, lines[2], "20.0")
	require.Regexp(t, `^N5_S17 .* 9 +0  9 `, lines[3])
	require.Regexp(t, `^total\s+3\s+260\s+2000\s+1000\s+50\s+0$`, lines[4])
}

func TestParseBudget(t *testing.T) {
	d, err := ParseBudget("", 4*time.Hour)
	require.NoError(t, err)
	require.Equal(t, 4*time.Hour, d)
	d, err = ParseBudget("90s", 0)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, d)
	for _, bad := range []string{"4", "-1h", "0s", "soon"} {
		_, err := ParseBudget(bad, 0)
		require.Error(t, err, bad)
	}
}

// A run made outside the schedule (a container scenario) is numbered after
// the soak's records, in their last round, and counts in the summary.
func TestAppendRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.jsonl")
	sc := &Scenario{Name: "S18", Duration: 40 * time.Second}
	require.NoError(t, AppendRun(path, sc, Result{Name: "S18", Acquisitions: 7, Seconds: 41}))
	require.NoError(t, AppendRecord(path, SoakRecord{Seq: 9, Round: 3, Result: Result{Name: "S1", Acquisitions: 5}}))
	require.NoError(t, AppendRun(path, sc, Result{Name: "S18", Acquisitions: 11, Seconds: 42}))
	recs, err := ReadRecords(path)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, [2]int{1, 1}, [2]int{recs[0].Seq, recs[0].Round})
	require.Equal(t, [2]int{10, 3}, [2]int{recs[2].Seq, recs[2].Round})
	require.Equal(t, 40.0, recs[2].Duration)
	require.Contains(t, SummaryLine(recs), "acquisitions=23")
}

// A checkpoint names its runs' timelines relative to its own folder, not by
// the machine's absolute paths, and the soak's index links them from there.
func TestAppendRecordRelativeTimelines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "soak.jsonl")
	tl := filepath.Join(dir, "histories", "S5", "run-001", TimelineFile)
	see := []string{tl + "#t=1.000-2.000", "elsewhere.html#final"}
	r := Result{Name: "S5", Timeline: tl, See: see, Violations: map[string]int{}}
	require.NoError(t, AppendRecord(path, SoakRecord{Seq: 1, Round: 1, Result: r}))
	require.Equal(t, tl+"#t=1.000-2.000", see[0], "the caller's result is left as it was")
	recs, err := ReadRecords(path)
	require.NoError(t, err)
	require.Equal(t, "histories/S5/run-001/"+TimelineFile, recs[0].Timeline)
	require.Equal(t, []string{"histories/S5/run-001/" + TimelineFile + "#t=1.000-2.000", "elsewhere.html#final"}, recs[0].See)
	require.NoError(t, WriteIndex(dir, "soak", []Result{recs[0].Result}))
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	require.Contains(t, string(b), `href="histories/S5/run-001/`+TimelineFile+`"`)
}

// The summary line names the code the runs ran: one commit when they all
// ran the same, every one (and "unknown" for runs without) when not.
func TestSummaryLineCode(t *testing.T) {
	run := func(code string) SoakRecord {
		return SoakRecord{Code: code, Result: Result{Name: "S2", Acquisitions: 10, Faults: 1, Violations: map[string]int{}}}
	}
	require.Equal(t, "soak: code=abc acquisitions=20 fault_exposed=20 faults=2 violations=0 upper95=0.139",
		SummaryLine([]SoakRecord{run("abc"), run("abc")}))
	require.Equal(t, []string{"abc", "unknown", "def+modified"}, Codes([]SoakRecord{run("abc"), run(""), run("def+modified"), run("abc")}))
	require.Nil(t, Codes([]SoakRecord{run(""), run("")}))
	t.Setenv(CodeEnv, "0123")
	path := filepath.Join(t.TempDir(), "soak.jsonl")
	require.NoError(t, AppendRun(path, &Scenario{Name: "S18"}, Result{Name: "S18", Violations: map[string]int{}}))
	recs, err := ReadRecords(path)
	require.NoError(t, err)
	require.Equal(t, "0123", recs[0].Code)
	k := NewSoak([]*Scenario{{Name: "S1", Duration: time.Second}}, nil, time.Minute)
	sc, round, ok := k.Next()
	require.True(t, ok)
	require.Equal(t, "0123", k.Done(sc, round, Result{Name: "S1"}).Code)
}

// The summary lines and page titles name the ZooKeeper releases the runs
// ran on, every one when they differ, and nothing for older records.
func TestSummaryLineZooKeeper(t *testing.T) {
	run := func(zk string) SoakRecord {
		return SoakRecord{Code: "abc", Result: Result{Name: "S2", ZooKeeper: zk, Acquisitions: 10, Faults: 1, Violations: map[string]int{}}}
	}
	for _, tc := range []struct {
		zks         []string
		line, title string
	}{
		{[]string{"3.9.6", "3.9.6"}, "soak: code=abc zk=3.9.6 acquisitions=20", "zklock soak (ZooKeeper 3.9.6)"},
		{[]string{"3.9.6", "3.8.0", "3.9.6"}, "soak: code=abc zk=3.9.6,3.8.0 acquisitions=30", "zklock soak (ZooKeeper 3.9.6, 3.8.0)"},
		{[]string{"", "3.8.0"}, "soak: code=abc zk=3.8.0 acquisitions=20", "zklock soak (ZooKeeper 3.8.0)"},
		{[]string{"", ""}, "soak: code=abc acquisitions=20", "zklock soak"},
	} {
		var recs []SoakRecord
		for _, zk := range tc.zks {
			recs = append(recs, run(zk))
		}
		require.True(t, strings.HasPrefix(SummaryLine(recs), tc.line+" "), "%v: %s", tc.zks, SummaryLine(recs))
		require.Equal(t, tc.title, ReleaseTitle("zklock soak", results(recs)))
	}
}
