package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"
)

// WriteJSON writes the report to path, creating its directory.
func (r *Report) WriteJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// targetsOf lists the targets in the order they were first recorded.
func (r *Report) targets() []string {
	var names []string
	for _, rec := range r.Records {
		if !slices.Contains(names, rec.Target) {
			names = append(names, rec.Target)
		}
	}
	return names
}

func ms(d float64) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", d/float64(time.Millisecond))
}

func num(x float64, ok bool, format string) string {
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

// cells lists the settings measured, standalone direct first.
func (r *Report) cells() []cellOf {
	var out []cellOf
	for _, l := range ratioLines(r.Records) {
		if !slices.Contains(out, l.cell) {
			out = append(out, l.cell)
		}
	}
	return out
}

// table is a tab writer for one right-aligned table.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// Print writes the releases measured (its first line), the tables, the
// goals and, last, the RATIO and FAILOVER lines.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintln(w, r.releaseLine())
	r.printThroughputTables(w)
	r.printPerOperation(w)
	r.printHerd(w)
	r.printCost(w)
	r.printCensus(w)
	r.printFailover(w)
	r.printVersions(w)

	fmt.Fprintln(w)
	r.printGoals(w)
	r.printRatios(w)
	r.printVersionRatios(w)
	r.printFailoverLines(w)
}

// PrintFailover writes what FailoverOnly measured: the failover table, its
// goals and the FAILOVER lines.
func (r *Report) PrintFailover(w io.Writer) {
	r.printFailover(w)
	fmt.Fprintln(w)
	if r.Failover != nil {
		for _, g := range r.Failover.goals() {
			fmt.Fprintf(w, "goal %s: %s %s\n", g.Name, g.Verdict, g.Detail)
		}
	}
	r.printFailoverLines(w)
}

// printThroughputTables writes a throughput table per setting, standalone
// direct first.
func (r *Report) printThroughputTables(w io.Writer) {
	fmt.Fprintf(w, "\nthroughput, standalone server, direct: medians of %d repetitions (uncontended: cycles/s and cycle time in ms; contended: handoffs/s and acquire wait in ms)\n", r.Config.Reps)
	r.printThroughput(w, direct)
	for _, c := range r.cells() {
		if c == direct {
			continue
		}
		fmt.Fprintf(w, "\nthroughput, %s, %g ms added round trip: medians of %d repetitions\n", c.setup, c.rtt, r.Config.Reps)
		r.printThroughput(w, c)
	}
}

// printThroughput writes the throughput table of one setting.
func (r *Report) printThroughput(w io.Writer, c cellOf) {
	recs := r.Records
	p50 := func(x *Run) float64 { return float64(x.P50) }
	p99 := func(x *Run) float64 { return float64(x.P99) }
	tw := table(w)
	fmt.Fprintf(tw, "target\tuncont/s\tp50\tp99\t%d sess/s\twait p50\twait p99\t%d gor/s\twait p50\twait p99\t\n", r.Config.Contenders, r.Config.Goroutines)
	for _, t := range r.targets() {
		row := t + "\t"
		for _, m := range []string{measureUnc, measureCont, measureGorout} {
			v, ok := medianOf(recs, c, t, m, perSec)
			a, _ := medianOf(recs, c, t, m, p50)
			b, _ := medianOf(recs, c, t, m, p99)
			if !ok {
				row += "-\t-\t-\t"
				continue
			}
			row += fmt.Sprintf("%.0f\t%s\t%s\t", v, ms(a), ms(b))
		}
		if row != t+"\t-\t-\t-\t-\t-\t-\t-\t-\t-\t" {
			fmt.Fprintln(tw, row)
		}
	}
	_ = tw.Flush()
}

// printPerOperation writes the requests, notifications and CPU per
// operation of each target, directly on the standalone server.
func (r *Report) printPerOperation(w io.Writer) {
	recs := r.Records
	fmt.Fprintf(w, "\nper operation (cycle uncontended, handoff contended): ZooKeeper requests and watch notifications counted by a relay in a separate %v run; server and client CPU ms from /proc during the timed runs (medians)\n", r.Config.Census)
	tw := table(w)
	fmt.Fprintln(tw, "target\tunc req\tnotif\tzk cpu\tcli cpu\tcont req\tnotif\tzk cpu\tcli cpu\tgor req\tnotif\tzk cpu\tcli cpu\t")
	for _, t := range r.targets() {
		row, any := t+"\t", false
		for _, m := range []string{measureUnc, measureCont, measureGorout} {
			var c *Record
			for i := range recs {
				if recs[i].Target == t && recs[i].Measure == censusPrefix+m && recs[i].Setup == Standalone {
					c = &recs[i]
				}
			}
			zc, okZ := medianOf(recs, direct, t, m, func(x *Run) float64 { return x.ServerCPU })
			cc, okC := medianOf(recs, direct, t, m, func(x *Run) float64 { return x.ClientCPU })
			if c != nil {
				row += fmt.Sprintf("%.2f\t%.2f\t", c.RequestsPerHandoff, c.NotificationsPerHandoff)
				any = true
			} else {
				row += "-\t-\t"
			}
			row += num(zc, okZ && zc > 0, "%.2f") + "\t" + num(cc, okC && cc > 0, "%.2f") + "\t"
			any = any || okZ
		}
		if any {
			fmt.Fprintln(tw, row)
		}
	}
	_ = tw.Flush()
}

// printHerd writes the herd table: per target, requests, notifications
// and handoffs/s at each herd size.
func (r *Report) printHerd(w io.Writer) {
	fmt.Fprintf(w, "\nherd: one session through a counting relay, a holder and N waiters, each waiter takes the lock once (N handoffs)\n")
	tw := table(w)
	hdr := "target\t"
	for _, col := range []string{"req/h@%d\t", "notif/h@%d\t", "handoffs/s@%d\t"} {
		for _, n := range r.Config.Herd {
			hdr += fmt.Sprintf(col, n)
		}
	}
	fmt.Fprintln(tw, hdr)
	for _, t := range r.targets() {
		cells := map[int]Record{}
		for _, rec := range r.Records {
			if rec.Target == t && rec.Measure == measureHerd {
				cells[rec.Waiters] = rec
			}
		}
		if len(cells) == 0 {
			continue
		}
		row := t + "\t"
		for _, f := range []func(Record) string{
			func(c Record) string { return fmt.Sprintf("%.2f", c.RequestsPerHandoff) },
			func(c Record) string { return fmt.Sprintf("%.2f", c.NotificationsPerHandoff) },
			func(c Record) string { return fmt.Sprintf("%.0f", c.PerSec) },
		} {
			for _, n := range r.Config.Herd {
				if c, ok := cells[n]; ok {
					row += f(c) + "\t"
				} else {
					row += "-\t"
				}
			}
		}
		fmt.Fprintln(tw, row)
	}
	_ = tw.Flush()
}

// printCost writes the Go targets' allocations per cycle and heap per
// waiting goroutine.
func (r *Report) printCost(w io.Writer) {
	fmt.Fprintf(w, "\ncost in this process (Go only): heap allocations per uncontended acquire+release; heap+stack per waiting goroutine at the largest herd, its first run and the same herd again\n")
	tw := table(w)
	fmt.Fprintln(tw, "target\tallocs/cycle\tbytes/waiter\tagain\t")
	largest := slices.Max(append([]int{0}, r.Config.Herd...))
	for _, t := range r.targets() {
		var allocs float64
		var okA bool
		for _, rec := range r.Records {
			if rec.Target == t && rec.Measure == measureAllocs {
				allocs, okA = rec.AllocsPerCycle, true
			}
		}
		h, okH := r.herdRecord(t, largest)
		okH = okH && h.HeapPerWaiter != 0
		if okA || okH {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", t, num(allocs, okA, "%.1f"), num(h.HeapPerWaiter, okH, "%.0f"), num(h.HeapPerWaiterAgain, okH && h.HeapPerWaiterAgain != 0, "%.0f"))
		}
	}
	_ = tw.Flush()
}

// printRatios writes the RATIO lines, in ratioLines' order.
func (r *Report) printRatios(w io.Writer) {
	fmt.Fprintf(w, "\nratios of throughputs (zklock's mutex over each peer): median of the %d per-repetition ratios [its %.0f%% interval for another run's median, never narrower than benchmath's interval of this one's]; total time %v\n",
		r.Config.Reps, confidence*100, r.Elapsed.Round(time.Second))
	ivs := r.ratioStats()
	for _, l := range ratioLines(r.Records) {
		if iv, ok := ivs[l.key]; ok {
			fmt.Fprintf(w, "RATIO %s %s\n", l.key, iv)
		}
	}
}

// String formats iv as "x [lo, hi]" (±inf for an unbounded end).
func (iv Interval) String() string {
	return fmt.Sprintf("%s [%s, %s]", bound(iv.X), bound(iv.Lo), bound(iv.Hi))
}

func bound(x float64) string {
	switch {
	case unbounded(x) && x < 0:
		return "-inf"
	case unbounded(x):
		return "+inf"
	}
	return fmt.Sprintf("%.2f", x)
}
