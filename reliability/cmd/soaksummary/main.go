// Command soaksummary prints the summary of a soak from its checkpoint file
// (soak.jsonl, one line per finished scenario run): the table per scenario,
// then the line "soak: acquisitions=N fault_exposed=M faults=F violations=V
// upper95=X", and a line for each run in which ZooKeeper forgot acknowledged
// writes (reliability.StoreChecker). A run judged again later (cmd/rejudge -checkpoint) counts with
// its later verdict; each such run is listed after the line, with its
// verdict at run time. It works on a finished, a running or a killed soak
// alike, and exits 1 if any scenario run has a violation or an error.
package main

import (
	"fmt"
	"os"

	"github.com/zklock/zklock/reliability"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: soaksummary <dir>/soak.jsonl")
		os.Exit(2)
	}
	recs, err := reliability.ReadRecords(os.Args[1])
	if err != nil {
		fail(err)
	}
	if len(recs) == 0 {
		fail(fmt.Errorf("no finished runs in %s", os.Args[1]))
	}
	rjs, err := reliability.ReadRejudgements(os.Args[1])
	if err != nil {
		fail(err)
	}
	judged, err := reliability.ApplyRejudgements(recs, rjs)
	if err != nil {
		fail(err)
	}
	fmt.Print(reliability.SoakTable(judged))
	fmt.Println(reliability.SummaryLine(judged))
	for _, l := range reliability.StoreLines(judged) {
		fmt.Println(l)
	}
	if len(rjs) > 0 {
		at := map[int]int{} // seq -> index in recs and judged alike
		for i, r := range recs {
			at[r.Seq] = i
		}
		for _, rj := range rjs {
			i := at[rj.Seq]
			fmt.Printf("re-judged: run %d (%s): %s at run time, %s now: %s\n", rj.Seq, rj.Scenario,
				verdict(recs[i].Violations), verdict(judged[i].Violations), rj.Why)
		}
		fmt.Println("at run time:", reliability.SummaryLine(recs))
	}
	for _, r := range judged {
		if r.Negative == "" && (r.Total > 0 || len(r.Errors) > 0) {
			os.Exit(1)
		}
	}
}

// verdict renders a run's violations per checker ("C1=1"), or "0".
func verdict(v map[string]int) string {
	if s := reliability.PerChecker(v); s != "" {
		return s
	}
	return "0"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "soaksummary:", err)
	os.Exit(1)
}
