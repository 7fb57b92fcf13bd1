package bench

import (
	"fmt"
	"math"
)

// The goals measured against the ensemble's own recovery at leader-kill
// (recipe zookeeper-election: from the kill until a member serves again)
// and those of the long session timeout.

// recoveryGoals judges, at the report's session timeout and zklock's first
// loss limit, how soon zklock's sessions and leaders are back after the
// ensemble; at the long session timeout, that no leader changed; and,
// everywhere, that no two leaders overlapped.
func (f *FailoverReport) recoveryGoals() []goalResult {
	var out []goalResult
	main := lossLabel(f.LossLimits[0], f.SessionTimeout)
	ens, okE := f.summary(caseLeaderKill, recipeZKElection, "")
	for _, rc := range []string{recipeZklockElection, recipeZklockLatch} {
		back := func(e FailoverEvent) float64 { return e.BackMs }
		if lags := f.afterEnsemble(rc, main, "", back); len(lags) > 0 {
			p50 := percentile(lags, 50)
			out = append(out, goalResult{fmt.Sprintf("failover leader-kill %s loss=%s: session back p50 <= ensemble serving + 100 ms", rc, main),
				mark(p50 <= 100), fmt.Sprintf("(p50 %.0f ms, p99 %.0f ms after it, %d events)", p50, percentile(lags, 99), len(lags))})
		}
		zk, okZ := f.summary(caseLeaderKill, rc, main)
		gap := func(e FailoverEvent) float64 { return e.GapMs }
		if lags := f.afterEnsemble(rc, main, "", gap); len(lags) > 0 && okE {
			p50 := percentile(lags, 50)
			out = append(out, goalResult{fmt.Sprintf("failover leader-kill %s loss=%s: gap - the ensemble's recovery, per event, p50 <= 100 ms", rc, main),
				mark(p50 <= 100), fmt.Sprintf("(p50 %.0f ms, p99 %.0f ms; the gaps' p50 %.0f ms, the ensemble's %.0f ms)", p50, percentile(lags, 99), percentile(zk.Gaps, 50), percentile(ens.Gaps, 50))})
		}
		if cur, ok := f.summary(caseLeaderKill, counterpart(rc), ""); okZ && ok {
			z, c := percentile(zk.Gaps, 50), percentile(cur.Gaps, 50)
			out = append(out, goalResult{fmt.Sprintf("failover leader-kill %s loss=%s: gap p50 < %s's", rc, main, counterpart(rc)),
				mark(z < c), fmt.Sprintf("(%.0f ms, %s's %.0f ms)", z, counterpart(rc), c)})
		}
	}
	for _, s := range f.summaries() {
		if s.Session == "" || s.Recipe == recipeZKElection || s.Loss == "" || s.Loss == "0ms" {
			continue
		}
		changes := mean(s.Changes) * float64(len(s.Changes))
		out = append(out, goalResult{fmt.Sprintf("failover %s %s loss=%s session=%s: no change of leader", s.Case, s.Recipe, s.Loss, s.Session),
			mark(len(s.Changes) > 0 && changes == 0), fmt.Sprintf("(%.0f changes in %d events)", changes, len(s.Changes))})
	}
	worst := 0.0
	for _, s := range f.summaries() {
		worst = math.Max(worst, s.MaxOverlap)
	}
	out = append(out, goalResult{"failover: no two leaders at once", mark(worst == 0), fmt.Sprintf("(longest overlap %.2f ms)", worst)})
	return out
}

// afterEnsemble is, per valid leader-kill event of recipe rc at loss label
// loss and session label session, how long after the ensemble served
// again the event's time at (BackMs, GapMs) was, both from the kill
// (negative: before it); events where at is negative are left out.
func (f *FailoverReport) afterEnsemble(rc, loss, session string, at func(FailoverEvent) float64) []float64 {
	serving := map[int]float64{}
	for _, e := range f.Events {
		if e.Case == caseLeaderKill && e.Recipe == recipeZKElection && e.Session == session && !e.Unsettled {
			serving[e.Event] = e.GapMs
		}
	}
	var out []float64
	for _, e := range f.Events {
		ens, ok := serving[e.Event]
		if ok && e.Case == caseLeaderKill && e.Recipe == rc && e.Loss == loss && e.Session == session && e.Valid && at(e) >= 0 {
			out = append(out, at(e)-ens)
		}
	}
	return out
}
