package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// counterpart is the Curator recipe a zklock recipe is judged against.
func counterpart(recipe string) string {
	if recipe == recipeZklockElection {
		return recipeCuratorSelector
	}
	return recipeCuratorLatch
}

// printFailover writes the failover table: per case and recipe, the time
// without a leader and the changes of leader per event.
func (r *Report) printFailover(w io.Writer) {
	f := r.Failover
	if f == nil {
		return
	}
	fmt.Fprintf(w, "\nfailover: time without a leader per event, ms (median [95%% interval], p50, p99) and changes of leader per event; session timeout %v, tick %v, zklock's loss limits %v (graceful and kill9 at the first); %v\n",
		f.SessionTimeout, f.Tick, lossLabels(f), f.Elapsed.Round(time.Second))
	tw := table(w)
	fmt.Fprintln(tw, "case\trecipe\tloss\tsession\tevents\tmedian\tinterval\tp50\tp99\tchanges\tmax\tmoved p50\tmoved max\tsilent p50\tsilent max\toverlap\t")
	for _, s := range f.summaries() {
		iv := medianInterval(s.Gaps)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%.2f\t[%s, %s]\t%.2f\t%.2f\t%.2f\t%.0f\t%s\t%s\t%s\t%s\t%.2f\t\n",
			s.Case, s.Recipe, dash(s.Loss), dash(s.Session), len(s.Gaps), iv.X, bound(iv.Lo), bound(iv.Hi), percentile(s.Gaps, 50), percentile(s.Gaps, 99),
			mean(s.Changes), percentile(s.Changes, 100), pct(s.Moved, 50), pct(s.Moved, 100), pct(s.Silent, 50), pct(s.Silent, 100), s.MaxOverlap)
	}
	_ = tw.Flush()
	for _, s := range f.summaries() {
		if s.Invalid > 0 {
			fmt.Fprintf(w, "  %s %s %s: %d of %d events left out (the leader's session was not on the member hit)\n",
				s.Case, s.Recipe, dash(s.Loss), s.Invalid, s.Events)
		}
		if s.Unsettled > 0 {
			fmt.Fprintf(w, "  %s %s %s: %d of %d events did not settle in %v (no single leader, or a session still disconnected); their time without a leader runs to the end of the wait\n",
				s.Case, s.Recipe, dash(s.Loss), s.Unsettled, s.Events, settleWait)
		}
	}
}

// pct is the nearest-rank percentile p of xs in whole ms, "-" if none.
func pct(xs []float64, p float64) string { return num(percentile(xs, p), len(xs) > 0, "%.0f") }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func lossLabels(f *FailoverReport) []string {
	var out []string
	for _, l := range f.LossLimits {
		out = append(out, lossLabel(l, f.SessionTimeout))
	}
	return out
}

// printFailoverLines writes one FAILOVER line per case, recipe and loss
// limit: FAILOVER <case> <recipe> p50=<ms> p99=<ms> changes=<events with a
// change of leader> events=<n>, then loss=<limit> for zklock's.
func (r *Report) printFailoverLines(w io.Writer) {
	if r.Failover == nil {
		return
	}
	for _, s := range r.Failover.summaries() {
		line := fmt.Sprintf("FAILOVER %s %s p50=%.2f p99=%.2f changes=%d events=%d", s.Case, s.Recipe, percentile(s.Gaps, 50), percentile(s.Gaps, 99), changedEvents(s.Changes), len(s.Gaps))
		if s.Loss != "" {
			line += " loss=" + s.Loss
		}
		if s.Session != "" {
			line += " session=" + s.Session
		}
		fmt.Fprintln(w, line)
	}
}

// changedEvents counts the events after which a new term began.
func changedEvents(changes []float64) int {
	n := 0
	for _, c := range changes {
		if c > 0 {
			n++
		}
	}
	return n
}

// goals judges the failover goals on intervals.
func (f *FailoverReport) goals() []goalResult {
	var out []goalResult
	main := lossLabel(f.LossLimits[0], f.SessionTimeout)
	floor, okF := f.summary(caseGraceful, recipeFloor, "")
	for _, rc := range []string{recipeZklockElection, recipeZklockLatch} {
		// (a) graceful: within 2 ms of the floor, no slower than Curator.
		zk, okZ := f.summary(caseGraceful, rc, main)
		if okZ && okF {
			out = append(out, diffGoal(fmt.Sprintf("failover graceful %s median gap - floor's <= 2 ms", rc), zk.Gaps, floor.Gaps, medianDiff, 2, "ms"))
		}
		if cur, ok := f.summary(caseGraceful, counterpart(rc), ""); okZ && ok {
			out = append(out, diffGoal(fmt.Sprintf("failover graceful %s median gap - %s's <= 0", rc, counterpart(rc)), zk.Gaps, cur.Gaps, medianDiff, 0, "ms"))
		}
		// (b) kill9: within one tick of the session timeout.
		if s, ok := f.summary(caseKill9, rc, main); ok {
			lim := ms64(int64(f.SessionTimeout + f.Tick))
			iv := medianInterval(s.Gaps)
			v, need := judge(iv, lim, false)
			out = append(out, goalResult{fmt.Sprintf("failover kill9 %s median gap <= session timeout + tick (%.0f ms)", rc, lim), v,
				"(" + iv.String() + " ms" + needText(v, need, "events") + ")"})
		}
	}
	for _, l := range f.LossLimits {
		label := lossLabel(l, f.SessionTimeout)
		for _, rc := range []string{recipeZklockElection, recipeZklockLatch} {
			// (c) no change of leader when the connection moved within the loss limit.
			if s, ok := f.summary(caseFollower, rc, label); ok && l != "0" {
				out = append(out, f.noChangeGoal(rc, label, s))
			}
			// (d) no more changes than Curator's default policy.
			zk, okZ := f.summary(caseLeaderKill, rc, label)
			cur, okC := f.summary(caseLeaderKill, counterpart(rc), "")
			if okZ && okC {
				out = append(out, diffGoal(fmt.Sprintf("failover leader-kill %s loss=%s changes/event - %s's <= 0", rc, label, counterpart(rc)), zk.Changes, cur.Changes, meanDiff, 0, "changes"))
			}
		}
	}
	return append(out, f.recoveryGoals()...)
}

// diffGoal judges "stat(a) - stat(b) <= limit" on a bootstrap interval.
func diffGoal(name string, a, b []float64, stat func(a, b []float64) float64, limit float64, unit string) goalResult {
	iv := bootstrap(a, b, stat)
	v, _ := judge(iv, limit, false)
	d := fmt.Sprintf("(%s %s, bootstrap interval", iv, unit)
	if v == Unresolved {
		d += "; more events would narrow it"
	}
	return goalResult{name, v, d + ")"}
}

// noChangeGoal: at follower-restart, no event whose leader's session was
// served again within the loss limit (as downMs counts) changed the leader.
func (f *FailoverReport) noChangeGoal(rc, label string, s *failSummary) goalResult {
	limit := f.lossMs(label)
	within, changed, late := 0, 0, 0
	var whys []string
	for _, e := range f.Events {
		if e.Case != caseFollower || e.Recipe != rc || e.Loss != label || e.Session != "" || !e.Valid || e.MovedMs < 0 {
			continue
		}
		if e.downMs() >= limit {
			if e.MovedMs < limit {
				late++
			}
			continue
		}
		within++
		if e.Changes > 0 {
			changed++
			whys = append(whys, fmt.Sprintf("event %d, moved in %.0f ms (silent for %s ms), the term ended: %s", e.Event, e.MovedMs, num(e.SilentMs, e.SilentMs > 0, "%.0f"), dash(e.Why)))
		}
	}
	g := goalResult{Name: fmt.Sprintf("failover follower-restart %s loss=%s: no change of leader when the connection moved within the loss limit", rc, label)}
	switch {
	case within == 0:
		g.Verdict = Unresolved
	case changed == 0:
		g.Verdict = Met
	default:
		g.Verdict = NotMet
	}
	g.Detail = fmt.Sprintf("(%d of %d such events changed leader, of %d events", changed, within, len(s.Gaps))
	if late > 0 {
		g.Detail += fmt.Sprintf("; %d more moved within the limit but had not heard a server for longer", late)
	}
	if within > 0 && changed == 0 {
		g.Detail += fmt.Sprintf("; the rate's 95%% upper bound %.1f%%", 100*(1-math.Pow(0.05, 1/float64(within))))
	}
	if len(whys) > 0 {
		g.Detail += "; " + strings.Join(whys, "; ")
	}
	g.Detail += ")"
	return g
}
