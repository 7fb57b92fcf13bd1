// Command rejudge checks a kept scenario run again with the current
// checkers: the histories a run left in its directory (RELIABILITY_KEEP's
// histories/<scenario>/run-NNN: the workers', the register's and the
// nemesis's JSONL logs) are merged and judged by C1-C7 with the bounds of
// the named scenario in the given mode (soak by default), as the suite
// judged them, less C5, which needs the servers' final state. It prints the
// acquisitions and every violation, and exits 1 if there is one.
//
//	go run ./reliability/cmd/rejudge -scenario S17 /work/soak/histories/S17/run-002
//
// It is for a checker that was found wrong after a run: the soak's
// checkpoint keeps the verdict given at run time, and this gives the
// verdict of today's checkers on the same history. With -checkpoint and
// -seq it also records that verdict in the checkpoint, as a line of its own
// beside the run's record (which is kept), so that soaksummary counts the
// run with it; -why says what was wrong with the verdict at run time.
//
//	go run ./reliability/cmd/rejudge -scenario S17 -checkpoint /work/soak/soak.jsonl -seq 33 \
//		-why "C1's window began at Lock's return (fixed in 3c40cbf)" /work/soak/histories/S17/run-002
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/zklock/zklock/reliability"
)

func main() {
	name := flag.String("scenario", "", "the scenario the run belongs to (S1, S17, ...)")
	mode := flag.String("mode", "soak", "the mode it ran in: smoke, short or soak")
	checkpoint := flag.String("checkpoint", "", "record the verdict in this soak checkpoint (soak.jsonl)")
	seq := flag.Int("seq", 0, "with -checkpoint: the run's number (its \"seq\") in the checkpoint")
	why := flag.String("why", "", "with -checkpoint: what was wrong with the verdict at run time")
	flag.Parse()
	if *checkpoint != "" && (*seq <= 0 || *why == "") {
		fmt.Fprintln(os.Stderr, "rejudge: -checkpoint needs -seq and -why")
		os.Exit(2)
	}
	if *name == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: rejudge -scenario S17 [-mode soak] <run directory>")
		os.Exit(2)
	}
	var sc *reliability.Scenario
	for _, s := range reliability.Scenarios(reliability.Mode(*mode)) {
		if s.Name == *name {
			sc = s
		}
	}
	if sc == nil {
		fail(fmt.Errorf("no scenario %q in mode %q", *name, *mode))
	}
	logs, err := filepath.Glob(filepath.Join(flag.Arg(0), "*.jsonl"))
	if err != nil || len(logs) == 0 {
		fail(fmt.Errorf("no JSONL history in %s", flag.Arg(0)))
	}
	evs, err := reliability.ReadFiles(logs...) // merged in time order
	if err != nil {
		fail(err)
	}
	h := reliability.Analyze(evs)
	vs := reliability.CheckAll(h, nil, reliability.CheckConfigFor(sc))
	rj := reliability.Rejudgement{Seq: *seq, Scenario: sc.Name, Kept: []string{"C5"}, Why: *why, At: time.Now().UTC()}
	rj.Violations, rj.Total, rj.StoreLosses, rj.Examples = reliability.Tally(vs)
	fmt.Printf("%s %s: acquisitions=%d violations=%d store_losses=%d\n", sc.Name, flag.Arg(0), h.Acquisitions(), rj.Total, rj.StoreLosses)
	for _, v := range vs {
		fmt.Printf("  %s: %s (see %s)\n", v.Checker, v.Detail, h.See(flag.Arg(0), v))
	}
	if *checkpoint != "" {
		if err := reliability.AppendRejudgement(*checkpoint, rj); err != nil {
			fail(err)
		}
		fmt.Printf("recorded in %s as the verdict on run %d\n", *checkpoint, *seq)
	}
	if rj.Total > 0 {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rejudge:", err)
	os.Exit(1)
}
