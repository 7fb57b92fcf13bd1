package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
)

// ratioGoals are the issues' ratio goals: a RATIO key and its minimum,
// judged on the ratio's interval (see judge). Issue 17's come first; issue
// 28 added the ensemble and contended-against-go-zookeeper ones.
var ratioGoals = []struct {
	key string
	min float64
}{
	{"inprocess zklock/curator", 2.0}, {"inprocess zklock/floor", 1.0}, {"inprocess-rtt2ms zklock/curator", 5},
	{"uncontended-rtt2ms zklock/curator", 1.5}, {"uncontended-rtt2ms zklock/pipelined-floor", 0.95},
	{"uncontended zklock/curator", 1.2}, {"uncontended zklock/floor", 0.95},
	{"contended zklock/curator", 1.0}, {"contended zklock/listed-floor", 0.9},
	{"contended-rtt2ms zklock/curator", 1.0}, {"contended-rtt2ms zklock/listed-floor", 0.9},
	{"contended zklock/gozk", 1.0},
	{"ensemble-uncontended zklock/curator", 1.0}, {"ensemble-uncontended zklock/gozk", 1.0},
	{"ensemble-contended zklock/curator", 1.0}, {"ensemble-contended zklock/gozk", 1.0},
}

// heapGoal is the heap+stack per waiting goroutine goal (go-zookeeper's
// figure when the goal was set), in bytes; zklock must also be at most
// go-zookeeper's figure of the same run.
const heapGoal = 4500

// honestShare is the intervals' honesty goal: the share of ratios whose
// median lies inside the other run's interval, both ways.
const honestShare = 0.9

// A goalResult is one goal of the report, judged.
type goalResult struct {
	Name    string // what is asked, e.g. "contended zklock/gozk >= 1.00"
	Verdict string // Met, NotMet or Unresolved
	Detail  string // the figures it was judged on
}

func mark(ok bool) string {
	if ok {
		return Met
	}
	return NotMet
}

// ratioGoal judges "key >= min" on the ratio's interval.
func ratioGoal(ivs map[string]Interval, key string, min float64) goalResult {
	g := goalResult{Name: fmt.Sprintf("%s >= %.2f", key, min)}
	iv, ok := ivs[key]
	if !ok {
		g.Verdict, g.Detail = Unresolved, "(not measured)"
		return g
	}
	var need int
	g.Verdict, need = judge(iv, min, true)
	g.Detail = "(" + iv.String() + needText(g.Verdict, need, "repetitions") + ")"
	return g
}

// needText says how many values would resolve an unresolved goal.
func needText(verdict string, need int, what string) string {
	switch {
	case verdict != Unresolved:
		return ""
	case need > 0:
		return fmt.Sprintf("; about %d %s would resolve it", need, what)
	}
	return fmt.Sprintf("; not within %d %s", maxProjected, what)
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

// goalResults judges every goal of the report, in print order.
func (r *Report) goalResults() []goalResult {
	ivs := r.ratioStats()
	var out []goalResult
	for _, g := range ratioGoals {
		out = append(out, ratioGoal(ivs, g.key, g.min))
	}
	out = append(out, r.honesty())
	nLo, nHi := 0, 0
	if len(r.Config.Herd) > 0 {
		nLo, nHi = slices.Min(r.Config.Herd), slices.Max(r.Config.Herd)
	}
	lo, okLo := r.herdRecord(ZklockMutex, nLo)
	hi, okHi := r.herdRecord(ZklockMutex, nHi)
	gozk, _ := r.herdRecord(GoZKLock, nHi)
	// "The same": no more than 5% (plus rounding) more at the largest herd.
	out = append(out, goalResult{fmt.Sprintf("herd requests/handoff flat (%d vs %d waiters)", nLo, nHi),
		mark(okLo && okHi && hi.RequestsPerHandoff <= lo.RequestsPerHandoff*1.05+0.05),
		fmt.Sprintf("(%.2f vs %.2f)", lo.RequestsPerHandoff, hi.RequestsPerHandoff)})
	// Judged on the herd run again: the first run of a size also grows the
	// runtime's pools, which it never shrinks and the next run reuses.
	again, gozkAgain := hi.HeapPerWaiterAgain, gozk.HeapPerWaiterAgain
	out = append(out, goalResult{fmt.Sprintf("heap+stack per waiting goroutine <= %d B and <= go-zookeeper's (%d waiters, the herd again)", heapGoal, nHi),
		mark(okHi && again != 0 && again <= heapGoal && (gozkAgain == 0 || again <= gozkAgain)),
		fmt.Sprintf("(%.0f vs go-zookeeper %.0f; first run %.0f vs %.0f)", again, gozkAgain, hi.HeapPerWaiter, gozk.HeapPerWaiter)})
	for _, rec := range r.Records {
		if rec.Measure == measureHeld {
			out = append(out, goalResult{fmt.Sprintf("%d held locks on one session <= 1024 B and 0 goroutines each", rec.Waiters),
				mark(rec.HeapPerHeld <= 1024 && rec.GoroutinesPerHeld < 1.0/float64(rec.Waiters)),
				fmt.Sprintf("(%.0f B, %.4f goroutines; the Mutex value itself %.0f B more)", rec.HeapPerHeld, rec.GoroutinesPerHeld, rec.HeapPerMutex)})
		}
	}
	if r.Failover != nil {
		out = append(out, r.Failover.goals()...)
	}
	return out
}

// honesty judges the intervals against the previous run's (Report.Previous):
// each ratio's median inside the other run's interval, both ways, for at
// least honestShare of the ratios. It needs a previous run on the same code.
func (r *Report) honesty() goalResult {
	g := goalResult{Name: fmt.Sprintf("intervals honest: each ratio's median inside the previous run's interval and back, for >= %.0f%% of the ratios", honestShare*100)}
	p := r.Previous
	switch {
	case p == nil:
		g.Verdict, g.Detail = Unresolved, "(no previous run: run make bench twice)"
		return g
	case p.Revision != r.Revision || r.Revision == "":
		g.Verdict, g.Detail = Unresolved, fmt.Sprintf("(the previous run measured other code: %q, this run %q)", p.Revision, r.Revision)
		return g
	}
	in, n, misses := agreement(p.Intervals, r.ratioStats())
	if n == 0 {
		g.Verdict, g.Detail = Unresolved, "(no ratio in both runs)"
		return g
	}
	g.Verdict = mark(float64(in) >= honestShare*float64(n))
	g.Detail = fmt.Sprintf("(%d of %d, previous run started %s", in, n, p.Started.Format("15:04:05"))
	if len(misses) > 0 {
		g.Detail += "; outside: " + misses[0]
		if len(misses) > 1 {
			g.Detail += fmt.Sprintf(" and %d more", len(misses)-1)
		}
	}
	g.Detail += ")"
	return g
}

// agreement counts the ratios of both a and b whose median lies inside the
// other's interval, both ways; misses lists the others.
func agreement(a, b map[string]Interval) (in, n int, misses []string) {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		x, ok := b[k]
		if !ok {
			continue
		}
		y := a[k]
		n++
		if x.X >= y.Lo && x.X <= y.Hi && y.X >= x.Lo && y.X <= x.Hi {
			in++
		} else {
			misses = append(misses, fmt.Sprintf("%s %.2f vs %s", k, y.X, x))
		}
	}
	return in, n, misses
}

// printGoals writes one line per goal.
func (r *Report) printGoals(w io.Writer) {
	for _, g := range r.goalResults() {
		fmt.Fprintf(w, "goal %s: %s %s\n", g.Name, g.Verdict, g.Detail)
	}
}

// ratioStats returns the ratios' intervals, computed from the records when
// the report predates them.
func (r *Report) ratioStats() map[string]Interval {
	if r.Intervals == nil {
		r.Intervals = ratioIntervals(r.Records)
	}
	return r.Intervals
}

// ReadPrevious reads the Previous of a report written by WriteJSON. A
// missing file is an error wrapping fs.ErrNotExist.
func ReadPrevious(path string) (*Previous, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return &Previous{Started: r.Started, Revision: r.Revision, Intervals: r.ratioStats()}, nil
}
