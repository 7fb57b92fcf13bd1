package bench

import (
	"fmt"
	"slices"
	"strings"
)

// cellOf selects the records of one setting.
type cellOf struct {
	setup string
	rtt   float64
}

var direct = cellOf{Standalone, 0}

// medianOf is the median over reps of f applied to the runs of one target
// and measure in setting c; ok is false if there are none.
func medianOf(recs []Record, c cellOf, target, measure string, f func(*Run) float64) (float64, bool) {
	var xs []float64
	for _, r := range recs {
		if r.Target == target && r.Measure == measure && r.Run != nil && r.Setup == c.setup && r.RTTms == c.rtt {
			xs = append(xs, f(r.Run))
		}
	}
	return median(xs), len(xs) > 0
}

func perSec(r *Run) float64 { return r.PerSec }

// workloadName is the name of a measure in a setting in the ratio lines:
// uncontended, contended (sessions), inprocess (goroutines on one
// session), with -rtt<N>ms for a delayed proxy and ensemble- for the
// ensemble.
func workloadName(c cellOf, measure string) string {
	w := measure
	if measure == measureGorout {
		w = "inprocess"
	}
	if c.setup == Ensemble {
		w = "ensemble-" + w
	}
	if c.rtt > 0 {
		w += fmt.Sprintf("-rtt%gms", c.rtt)
	}
	return w
}

// A peer of a ratio line: zklock's mutex against target in measure.
type peer struct{ name, target string }

// peersOf lists the ratio lines' peers of a measure, in print order.
func peersOf(measure string) []peer {
	locks := []peer{{"curator", CuratorMutex}, {"gozk", GoZKLock}, {"kazoo", KazooLock}}
	switch measure {
	case measureUnc:
		return append(locks, peer{"floor", FloorCycle}, peer{"pipelined-floor", FloorPipelined})
	case measureCont:
		return append(locks, peer{"floor", FloorHandoff}, peer{"listed-floor", FloorListed})
	case measureGorout:
		return append(locks, peer{"floor", FloorHandoff})
	}
	return nil
}

// floorMeasure: floors are measured once per setting; the bare handoff
// floor stands for both contended workloads.
func floorMeasure(target, measure string) string {
	if target == FloorHandoff || target == FloorListed {
		return measureCont
	}
	return measure
}

// ratioLine is one RATIO line's key and how to compute it.
type ratioLine struct {
	key      string // "<workload> zklock/<peer>"
	cell     cellOf
	measure  string
	workload string
	peer     peer
}

// ratioLines lists every ratio line the records allow, in print order.
func ratioLines(recs []Record) []ratioLine {
	var cells []cellOf
	for _, r := range recs {
		c := cellOf{r.Setup, r.RTTms}
		if r.Run != nil && !slices.Contains(cells, c) {
			cells = append(cells, c)
		}
	}
	slices.SortStableFunc(cells, func(a, b cellOf) int {
		if a.setup != b.setup {
			return strings.Compare(b.setup, a.setup) // standalone first
		}
		return cmpFloat(a.rtt, b.rtt)
	})
	var out []ratioLine
	for _, c := range cells {
		for _, m := range []string{measureUnc, measureCont, measureGorout} {
			w := workloadName(c, m)
			for _, p := range peersOf(m) {
				out = append(out, ratioLine{key: w + " zklock/" + p.name, cell: c, measure: m, workload: w, peer: p})
			}
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// perRep is f of the runs of one target and measure in setting c, by
// repetition.
func perRep(recs []Record, c cellOf, target, measure string, f func(*Run) float64) map[int]float64 {
	out := map[int]float64{}
	for _, r := range recs {
		if r.Target == target && r.Measure == measure && r.Run != nil && r.Setup == c.setup && r.RTTms == c.rtt {
			out[r.Rep] = f(r.Run)
		}
	}
	return out
}

// ratioIntervals are the RATIO lines' figures: per line, the median of the
// per-repetition throughput ratios with its 95% interval (see Interval).
func ratioIntervals(recs []Record) map[string]Interval {
	out := map[string]Interval{}
	for _, l := range ratioLines(recs) {
		a := perRep(recs, l.cell, ZklockMutex, l.measure, perSec)
		b := perRep(recs, l.cell, l.peer.target, floorMeasure(l.peer.target, l.measure), perSec)
		if xs := pairedRatios(a, b); len(xs) > 0 {
			out[l.key] = repeatInterval(xs)
		}
	}
	return out
}

// ratios are the RATIO lines' central figures (Interval.X).
func ratios(ivs map[string]Interval) map[string]float64 {
	out := make(map[string]float64, len(ivs))
	for k, iv := range ivs {
		out[k] = iv.X
	}
	return out
}
