// Command soaksummary prints the summary of a soak from its checkpoint file
// (soak.jsonl, one line per finished scenario run): the table per scenario,
// then the line "soak: acquisitions=N fault_exposed=M faults=F violations=V
// upper95=X". It works on a finished, a running or a killed soak alike, and
// exits 1 if any scenario run had a violation or an error.
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
		fmt.Fprintln(os.Stderr, "soaksummary:", err)
		os.Exit(1)
	}
	if len(recs) == 0 {
		fmt.Fprintf(os.Stderr, "soaksummary: no finished runs in %s\n", os.Args[1])
		os.Exit(1)
	}
	fmt.Print(reliability.SoakTable(recs))
	fmt.Println(reliability.SummaryLine(recs))
	bad := false
	for _, r := range recs {
		if r.Negative == "" && (r.Total > 0 || len(r.Errors) > 0) {
			bad = true
		}
	}
	if bad {
		os.Exit(1)
	}
}
