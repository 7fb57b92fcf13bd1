package reliability

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A re-judgement is a line of its own in the checkpoint: the run's record
// (and so a resumed soak) is unchanged, and the summary counts the run with
// its later verdict, the checkers it did not judge again keeping their
// run-time counts.
func TestRejudgementCountsInSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.jsonl")
	require.NoError(t, AppendRecord(path, SoakRecord{Seq: 1, Round: 1, Result: Result{Name: "S1", Acquisitions: 100, Violations: map[string]int{}}}))
	require.NoError(t, AppendRecord(path, SoakRecord{Seq: 2, Round: 1, Result: Result{Name: "S17", Acquisitions: 50, Faults: 4,
		Violations: map[string]int{"C1": 2, "C5": 1}, Total: 3,
		Examples: []Violation{{Checker: "C1", Detail: "overlap"}, {Checker: "C5", Detail: "node left"}}}}))
	require.NoError(t, AppendRecord(path, SoakRecord{Seq: 3, Round: 1, Result: Result{Name: "S17", Acquisitions: 70, Faults: 5,
		Violations: map[string]int{"C1": 1}, Total: 1}}))

	require.NoError(t, AppendRejudgement(path, Rejudgement{Seq: 2, Scenario: "S17", Violations: map[string]int{}, Kept: []string{"C5"}, Why: "window"}))
	require.NoError(t, AppendRejudgement(path, Rejudgement{Seq: 3, Scenario: "S17", Violations: map[string]int{}, Kept: []string{"C5"}, Why: "window"}))

	recs, err := ReadRecords(path)
	require.NoError(t, err)
	require.Len(t, recs, 3, "re-judgements are not runs")
	require.Equal(t, 3, recs[1].Total, "the run's record keeps its run-time verdict")
	rjs, err := ReadRejudgements(path)
	require.NoError(t, err)
	require.Len(t, rjs, 2)

	judged, err := ApplyRejudgements(recs, rjs)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"C5": 1}, judged[1].Violations)
	require.Equal(t, 1, judged[1].Total)
	require.Equal(t, []Violation{{Checker: "C5", Detail: "node left"}}, judged[1].Examples)
	require.Equal(t, 0, judged[2].Total)
	require.Equal(t, 3, recs[1].Total, "ApplyRejudgements does not change its input")
	require.Equal(t, "soak: acquisitions=220 fault_exposed=120 faults=9 violations=1 upper95=0.0389", SummaryLine(judged))
	require.Equal(t, "soak: acquisitions=220 fault_exposed=120 faults=9 violations=4 upper95=0.0747", SummaryLine(recs))

	require.Empty(t, StoreLines(judged))
	require.NoError(t, AppendRejudgement(path, Rejudgement{Seq: 2, Scenario: "S17", Violations: map[string]int{}, StoreLosses: 1, Kept: []string{"C5"}, Why: "store"}))
	rjs, err = ReadRejudgements(path)
	require.NoError(t, err)
	judged, err = ApplyRejudgements(recs, rjs)
	require.NoError(t, err)
	require.Equal(t, []string{"store: run 2 (S17): ZooKeeper forgot 1 acknowledged write (not counted as violations; see its ZK findings)"}, StoreLines(judged))

	// A later re-judgement of the same run wins.
	require.NoError(t, AppendRejudgement(path, Rejudgement{Seq: 3, Scenario: "S17", Violations: map[string]int{"C3": 1}, Total: 1, Why: "again"}))
	rjs, err = ReadRejudgements(path)
	require.NoError(t, err)
	judged, err = ApplyRejudgements(recs, rjs)
	require.NoError(t, err)
	require.Equal(t, 1, judged[2].Total)
}

// A re-judgement of a run the checkpoint does not have, or of a run of
// another scenario, is refused and leaves the checkpoint as it was.
func TestRejudgementOfAnotherCheckpointRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.jsonl")
	require.NoError(t, AppendRecord(path, SoakRecord{Seq: 1, Round: 1, Result: Result{Name: "S17", Violations: map[string]int{"C1": 1}, Total: 1}}))
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, rj := range []Rejudgement{
		{Seq: 2, Scenario: "S17", Why: "no such run"},
		{Seq: 1, Scenario: "S2", Why: "another scenario"},
	} {
		require.Error(t, AppendRejudgement(path, rj), rj.Why)
	}
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before, after)
	recs, err := ReadRecords(path)
	require.NoError(t, err)
	_, err = ApplyRejudgements(recs, []Rejudgement{{Seq: 7, Scenario: "S17"}})
	require.ErrorContains(t, err, "no such run")
}
