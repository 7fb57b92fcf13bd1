package bench

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// FailoverReport is what the failover phase measured.
type FailoverReport struct {
	SessionTimeout time.Duration   `json:"session_timeout_ns"`
	Tick           time.Duration   `json:"tick_ns"`     // the ensemble's tickTime
	LossLimits     []string        `json:"loss_limits"` // zklock's, as FailoverConfig has them
	Elapsed        time.Duration   `json:"elapsed_ns"`
	Events         []FailoverEvent `json:"events"`
}

// FailoverEvent is one recipe's outcome of one event.
type FailoverEvent struct {
	Case   string `json:"case"`
	Recipe string `json:"recipe"`
	Loss   string `json:"loss,omitempty"` // zklock's loss limit (lossLabel)
	// Session is the sessions' timeout where it is not the report's
	// ("4s"), "" where it is.
	Session string  `json:"session,omitempty"`
	Event   int     `json:"event"`
	GapMs   float64 `json:"gap_ms"`     // time without a live term, from the event on
	Changes int     `json:"changes"`    // terms started after the event
	Overlap float64 `json:"overlap_ms"` // time with two live terms (a safety violation)
	// MovedMs is how long the first leader's connection was down (from the
	// state change its client reported to the next connected one); -1 if
	// it never was.
	MovedMs float64 `json:"moved_ms"`
	// SilentMs is how long the first leader's session went without
	// hearing from a server: from the last bytes it read before its
	// connection dropped to its next connected state, what a loss limit
	// counts; -1 if the connection never dropped or the process does not
	// say (Curator's), 0 in reports from before it was measured.
	SilentMs float64 `json:"silent_ms"`
	// BackMs is when the first leader's connection was back, from the
	// event's start; -1 if it never dropped or was not back within it.
	BackMs float64 `json:"back_ms"`
	// Valid: the first leader's session was on the member the fault hit
	// (always true for graceful and kill9).
	Valid bool `json:"valid"`
	// Why is how the first leader's term ended, as its process reported
	// it ("" if it did not end).
	Why string `json:"why,omitempty"`
	// Unsettled: the event was not over within settleWait (no single
	// leader, a session still disconnected); GapMs then runs to its end.
	Unsettled bool `json:"unsettled,omitempty"`
}

// record analyses one event of chain c from its participants' lines evs:
// the leader led at t0 (when the event began) and, if killed, its term
// ended then (its process can say nothing more).
func (r *failoverRun) record(kase string, i int, c *lchain, evs []fevent, t0, tEnd int64, killed, valid bool) {
	e := FailoverEvent{Case: kase, Recipe: c.v.recipe, Loss: lossLabel(c.v.loss, r.timeout), Session: r.sessionLabel(),
		Event: i, MovedMs: -1, SilentMs: -1, BackMs: -1, Valid: valid}
	var mine []fevent
	for _, ev := range evs {
		if ev.ID == c.leader.id || ev.ID == c.waiter.id {
			mine = append(mine, ev)
		}
	}
	slices.SortStableFunc(mine, func(a, b fevent) int { return cmp.Compare(a.T, b.T) })
	live := map[string]bool{c.leader.id: !killed}
	count := len(live)
	if killed {
		count = 0
	}
	cur := t0
	var gap, overlap int64
	advance := func(t int64) {
		t = min(max(t, t0), tEnd)
		if t > cur {
			switch {
			case count == 0:
				gap += t - cur
			case count > 1:
				overlap += t - cur
			}
			cur = t
		}
	}
	var down, heard, back int64 = -1, 0, -1 // the leader's connection: dropped, last heard, back
	for _, ev := range mine {
		advance(ev.T)
		switch ev.Ev {
		case "start":
			if !live[ev.ID] {
				live[ev.ID] = true
				count++
				if ev.T > t0 {
					e.Changes++
				}
			}
		case "end":
			if live[ev.ID] {
				live[ev.ID] = false
				count--
			}
			if ev.ID == c.leader.id && e.Why == "" {
				e.Why = ev.Why
			}
		case "conn":
			if !faultCase(kase) || ev.ID != c.leader.id || ev.T < t0 || back >= 0 {
				continue
			}
			switch {
			case down < 0 && !connectedState(ev.State):
				down, heard = ev.T, ev.Heard
			case down >= 0 && connectedState(ev.State):
				back = ev.T
			}
		}
	}
	advance(tEnd)
	if down >= 0 && back >= 0 {
		e.BackMs = ms64(back - t0)
	}
	if down >= 0 {
		if back < 0 { // never back within the event
			back = tEnd
		}
		e.MovedMs = ms64(back - down)
		if heard > 0 {
			e.SilentMs = ms64(back - heard)
		}
	}
	e.GapMs, e.Overlap = ms64(gap), ms64(overlap)
	r.rep.Events = append(r.rep.Events, e)
}

// downMs is how long the event kept the first leader's session from a
// server, as a loss limit counts it: its silence where its process measured
// that, else how long its connection was down; -1 if it never dropped.
func (e FailoverEvent) downMs() float64 {
	if e.SilentMs > 0 {
		return e.SilentMs
	}
	return e.MovedMs
}

// faultCase: the cases that hit a ZooKeeper member.
func faultCase(kase string) bool { return kase == caseFollower || kase == caseLeaderKill }

func ms64(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }

// failSummary is one FAILOVER line: a case, a recipe, a loss limit.
type failSummary struct {
	Case, Recipe, Loss string
	Session            string    // FailoverEvent.Session
	Gaps, Changes      []float64 // of the valid events
	Moved              []float64 // of the valid events whose leader's connection dropped
	Silent             []float64 // of those whose process said when it last heard a server
	Events, Invalid    int
	Unsettled          int
	MaxOverlap         float64
}

// summaries groups the events into FAILOVER lines, in print order.
func (f *FailoverReport) summaries() []*failSummary {
	var out []*failSummary
	find := func(e FailoverEvent) *failSummary {
		for _, s := range out {
			if s.Case == e.Case && s.Recipe == e.Recipe && s.Loss == e.Loss && s.Session == e.Session {
				return s
			}
		}
		s := &failSummary{Case: e.Case, Recipe: e.Recipe, Loss: e.Loss, Session: e.Session}
		out = append(out, s)
		return s
	}
	for _, e := range f.Events {
		s := find(e)
		s.Events++
		if !e.Valid {
			s.Invalid++
			continue
		}
		if e.Unsettled {
			s.Unsettled++
		}
		s.Gaps = append(s.Gaps, e.GapMs)
		s.Changes = append(s.Changes, float64(e.Changes))
		if e.SilentMs > 0 {
			s.Silent = append(s.Silent, e.SilentMs)
		}
		if e.MovedMs >= 0 {
			s.Moved = append(s.Moved, e.MovedMs)
		}
		s.MaxOverlap = math.Max(s.MaxOverlap, e.Overlap)
	}
	order := func(s *failSummary) int { return slices.Index(failoverCases, s.Case) }
	slices.SortStableFunc(out, func(a, b *failSummary) int {
		return cmp.Or(cmp.Compare(a.Session, b.Session), cmp.Compare(order(a), order(b)))
	})
	return out
}

// summary returns the line of case, recipe and loss label at the report's
// session timeout, if measured.
func (f *FailoverReport) summary(kase, recipe, loss string) (*failSummary, bool) {
	return f.summaryAt(kase, recipe, loss, "")
}

// summaryAt is summary at session timeout label session (Session).
func (f *FailoverReport) summaryAt(kase, recipe, loss, session string) (*failSummary, bool) {
	for _, s := range f.summaries() {
		if s.Case == kase && s.Recipe == recipe && s.Loss == loss && s.Session == session {
			return s, len(s.Gaps) > 0
		}
	}
	return nil, false
}

// lossMs is a loss label's limit in milliseconds (+Inf for "expiry").
func (f *FailoverReport) lossMs(label string) float64 {
	for _, l := range f.LossLimits {
		if lossLabel(l, f.SessionTimeout) == label {
			if label == "expiry" {
				return math.Inf(1)
			}
			return ms64(int64(lossDuration(l, f.SessionTimeout)))
		}
	}
	return 0
}

// lossDuration is a loss limit's duration (negative for "expiry").
func lossDuration(l string, timeout time.Duration) time.Duration {
	if l == "default" {
		return timeout * 2 / 3
	}
	d, err := time.ParseDuration(l + "ms")
	if err != nil {
		return 0
	}
	return d
}
