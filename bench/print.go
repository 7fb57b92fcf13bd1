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

// printThroughput writes the throughput table of one setting.
func (r *Report) printThroughput(w io.Writer, c cellOf) {
	recs := r.Records
	p50 := func(x *Run) float64 { return float64(x.P50) }
	p99 := func(x *Run) float64 { return float64(x.P99) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
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

// Print writes the tables, the goals and, last, the four ratio lines.
func (r *Report) Print(w io.Writer) {
	recs := r.Records
	fmt.Fprintf(w, "\nthroughput, standalone server, direct: medians of %d repetitions (uncontended: cycles/s and cycle time in ms; contended: handoffs/s and acquire wait in ms)\n", r.Config.Reps)
	r.printThroughput(w, direct)
	for _, c := range r.cells() {
		if c == direct {
			continue
		}
		fmt.Fprintf(w, "\nthroughput, %s, %g ms added round trip: medians of %d repetitions\n", c.setup, c.rtt, r.Config.Reps)
		r.printThroughput(w, c)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "\nper operation (cycle uncontended, handoff contended): ZooKeeper requests and watch notifications counted by a relay in a separate %v run; server and client CPU ms from /proc during the timed runs (medians)\n", r.Config.Census)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tunc req\tnotif\tzk cpu\tcli cpu\tcont req\tnotif\tzk cpu\tcli cpu\tgor req\tnotif\tzk cpu\tcli cpu\t")
	for _, t := range r.targets() {
		row, any := t+"\t", false
		for _, m := range []string{measureUnc, measureCont, measureGorout} {
			var c *Record
			for i := range recs {
				if recs[i].Target == t && recs[i].Measure == censusPrefix+m {
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

	fmt.Fprintf(w, "\nherd: one session through a counting relay, a holder and N waiters, each waiter takes the lock once (N handoffs)\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "target\t"
	for _, n := range r.Config.Herd {
		hdr += fmt.Sprintf("req/h@%d\t", n)
	}
	for _, n := range r.Config.Herd {
		hdr += fmt.Sprintf("notif/h@%d\t", n)
	}
	for _, n := range r.Config.Herd {
		hdr += fmt.Sprintf("handoffs/s@%d\t", n)
	}
	fmt.Fprintln(tw, hdr)
	for _, t := range r.targets() {
		cells := map[int]Record{}
		for _, rec := range recs {
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

	fmt.Fprintf(w, "\ncost in this process (Go only): heap allocations per uncontended acquire+release; heap+stack per waiting goroutine at the largest herd, its first run and the same herd again\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tallocs/cycle\tbytes/waiter\tagain\t")
	largest := slices.Max(append([]int{0}, r.Config.Herd...))
	for _, t := range r.targets() {
		var allocs float64
		var okA bool
		for _, rec := range recs {
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

	fmt.Fprintln(w)
	r.printGoals(w)
	fmt.Fprintf(w, "\nratios of median throughputs (zklock's mutex over each peer), %d interleaved repetitions; total time %v\n", r.Config.Reps, r.Elapsed.Round(time.Second))
	for _, l := range ratioLines(r.Records) {
		if v, ok := r.Ratios[l.key]; ok {
			fmt.Fprintf(w, "RATIO %s %.2f\n", l.key, v)
		}
	}
}

// goals are issue 17's ratio goals: a RATIO key and its minimum.
var goals = []struct {
	key string
	min float64
}{
	{"inprocess zklock/curator", 2.0}, {"inprocess zklock/floor", 1.0}, {"inprocess-rtt2ms zklock/curator", 5},
	{"uncontended-rtt2ms zklock/curator", 1.5}, {"uncontended-rtt2ms zklock/pipelined-floor", 0.95},
	{"uncontended zklock/curator", 1.2}, {"uncontended zklock/floor", 0.95},
	{"contended zklock/curator", 1.0}, {"contended zklock/listed-floor", 0.9},
	{"contended-rtt2ms zklock/curator", 1.0}, {"contended-rtt2ms zklock/listed-floor", 0.9},
}

// heapGoal is the heap+stack per waiting goroutine goal (go-zookeeper's
// figure when the goal was set), in bytes; zklock must also be at most
// go-zookeeper's figure of the same run.
const heapGoal = 4500

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

// herdRecord returns target's herd of n waiters (the last, if several).
func (r *Report) herdRecord(target string, n int) (Record, bool) {
	var out Record
	found := false
	for _, rec := range r.Records {
		if rec.Target == target && rec.Measure == measureHerd && rec.Waiters == n {
			out, found = rec, true
		}
	}
	return out, found
}

func (r *Report) printGoals(w io.Writer) {
	for _, g := range goals {
		v, ok := r.Ratios[g.key]
		fmt.Fprintf(w, "goal %-44s >= %.2f: %s (%.2f)\n", g.key, g.min, mark(ok && v >= g.min), v)
	}
	nLo, nHi := 0, 0
	if len(r.Config.Herd) > 0 {
		nLo, nHi = slices.Min(r.Config.Herd), slices.Max(r.Config.Herd)
	}
	lo, okLo := r.herdRecord(ZklockMutex, nLo)
	hi, okHi := r.herdRecord(ZklockMutex, nHi)
	gozk, _ := r.herdRecord(GoZKLock, nHi)
	// "The same": no more than 5% (plus rounding) more at the largest herd.
	fmt.Fprintf(w, "goal herd requests/handoff flat (%d vs %d waiters): %s (%.2f vs %.2f)\n",
		nLo, nHi, mark(okLo && okHi && hi.RequestsPerHandoff <= lo.RequestsPerHandoff*1.05+0.05), lo.RequestsPerHandoff, hi.RequestsPerHandoff)
	// Judged on the herd run again: the first run of a size also grows the
	// runtime's pools, which it never shrinks and the next run reuses.
	again, gozkAgain := hi.HeapPerWaiterAgain, gozk.HeapPerWaiterAgain
	fmt.Fprintf(w, "goal heap+stack per waiting goroutine <= %d B and <= go-zookeeper's (%d waiters, the herd again): %s (%.0f vs go-zookeeper %.0f; first run %.0f vs %.0f)\n",
		heapGoal, nHi, mark(okHi && again != 0 && again <= heapGoal && (gozkAgain == 0 || again <= gozkAgain)), again, gozkAgain, hi.HeapPerWaiter, gozk.HeapPerWaiter)
	for _, rec := range r.Records {
		if rec.Measure == measureHeld {
			fmt.Fprintf(w, "goal %d held locks on one session <= 1024 B and 0 goroutines each: %s (%.0f B, %.4f goroutines; the Mutex value itself %.0f B more)\n",
				rec.Waiters, mark(rec.HeapPerHeld <= 1024 && rec.GoroutinesPerHeld < 1.0/float64(rec.Waiters)), rec.HeapPerHeld, rec.GoroutinesPerHeld, rec.HeapPerMutex)
		}
	}
}
