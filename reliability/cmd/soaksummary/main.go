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
	"sort"
	"strings"

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
		then, now := map[int]map[string]int{}, map[int]map[string]int{}
		for i := range recs {
			then[recs[i].Seq], now[judged[i].Seq] = recs[i].Violations, judged[i].Violations
		}
		for _, rj := range rjs {
			fmt.Printf("re-judged: run %d (%s): %s at run time, %s now: %s\n", rj.Seq, rj.Scenario,
				verdict(then[rj.Seq]), verdict(now[rj.Seq]), rj.Why)
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
	var parts []string
	for c, n := range v {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", c, n))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "soaksummary:", err)
	os.Exit(1)
}
