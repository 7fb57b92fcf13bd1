package reliability

import (
	"encoding/json"
	"fmt"
	"maps"
	"time"
)

// A Rejudgement is a later verdict on one finished run of a soak: the run's
// kept history judged again (cmd/rejudge) after a checker was found wrong.
// It is appended to the soak's checkpoint as a line of its own, beside the
// run's record, which keeps the verdict given at run time; ReadRecords skips
// such lines (they have no "name"), so a checkpoint that has them still
// resumes, and ApplyRejudgements gives the verdicts as judged now.
type Rejudgement struct {
	Seq         int            `json:"rejudged"` // the Seq of the run judged again
	Scenario    string         `json:"scenario"` // its scenario, as a check on Seq
	Violations  map[string]int `json:"violations"`
	Total       int            `json:"violations_total"`
	StoreLosses int            `json:"store_losses,omitempty"` // as Result.StoreLosses
	Examples    []Violation    `json:"examples,omitempty"`
	// Kept names the checkers not judged again (C5 needs the servers'
	// final state, which a kept history does not have): the run's counts
	// at run time stand for them.
	Kept []string  `json:"kept,omitempty"`
	Why  string    `json:"why"` // what was wrong with the run-time verdict
	At   time.Time `json:"at"`
}

// ReadRejudgements reads the re-judgements of a checkpoint file (lines
// with a "rejudged" field); a torn line is skipped. A missing file has
// none.
func ReadRejudgements(path string) ([]Rejudgement, error) {
	var out []Rejudgement
	err := eachLine(path, func(b []byte) {
		var rj Rejudgement
		if json.Unmarshal(b, &rj) == nil && rj.Seq > 0 && rj.Scenario != "" {
			out = append(out, rj)
		}
	})
	return out, err
}

// AppendRejudgement appends rj to the checkpoint file at path, after
// checking that the file has a run numbered rj.Seq of scenario
// rj.Scenario.
func AppendRejudgement(path string, rj Rejudgement) error {
	recs, err := ReadRecords(path)
	if err != nil {
		return err
	}
	if _, err := ApplyRejudgements(recs, []Rejudgement{rj}); err != nil {
		return err
	}
	b, err := json.Marshal(rj)
	if err != nil {
		return err
	}
	return appendLine(path, b)
}

// ApplyRejudgements returns a copy of recs in which each re-judged run
// carries its later verdict (the last one, if a run was judged again more
// than once), with its run-time counts kept for the checkers it did not judge.
// A re-judgement that names no run of recs, or a run of
// another scenario, is an error: it belongs to another checkpoint.
func ApplyRejudgements(recs []SoakRecord, rjs []Rejudgement) ([]SoakRecord, error) {
	out := append([]SoakRecord(nil), recs...)
	at := make(map[int]int, len(out))
	for i, r := range out {
		at[r.Seq] = i
	}
	for _, rj := range rjs {
		i, ok := at[rj.Seq]
		if !ok {
			return nil, fmt.Errorf("reliability: re-judgement of run %d (%s): no such run in the checkpoint", rj.Seq, rj.Scenario)
		}
		if out[i].Name != rj.Scenario {
			return nil, fmt.Errorf("reliability: re-judgement of run %d names %s, but that run is %s", rj.Seq, rj.Scenario, out[i].Name)
		}
		v := maps.Clone(rj.Violations)
		if v == nil {
			v = map[string]int{}
		}
		examples := append([]Violation(nil), rj.Examples...)
		for _, c := range rj.Kept {
			v[c] = out[i].Violations[c]
			for _, x := range out[i].Examples {
				if x.Checker == c {
					examples = append(examples, x)
				}
			}
		}
		total := 0
		for _, n := range v {
			total += n
		}
		out[i].Violations, out[i].Total, out[i].Examples = v, total, examples
		out[i].StoreLosses = rj.StoreLosses
	}
	return out, nil
}
