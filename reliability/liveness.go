package reliability

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// CheckLiveness is C4: every Lock call ends (ok or fail); a Lock fails only
// when the run stops or within Recovery of a fault; a Lock in flight when
// its own session is expired ends within Recovery of the expiry, unless it
// acquires (see expiredWaiters); and no lock sits free for longer than Idle
// while someone waits for it, unless a fault (plus Recovery) overlaps that
// time, nor ever for longer than Recovery, faults or not (a deadlock hidden
// behind back-to-back faults).
func CheckLiveness(h *History, cfg CheckConfig) []Violation {
	out := expiredWaiters(h, cfg)
	rec := int64(cfg.Recovery)
	type pt struct {
		t     int64
		wait  int // +1 invoke, -1 outcome
		hold  int // +1 start, -1 end
		order int
	}
	pts := map[string][]pt{}
	for id, inv := range h.Invokes {
		o, ok := h.Outcome[id]
		if kt, killed := h.killed(inv.Worker); !ok && killed && inv.T <= kt {
			pts[inv.Lock] = append(pts[inv.Lock], pt{t: inv.T, wait: 1}, pt{t: kt, wait: -1}) // it died waiting
			continue
		}
		if !ok {
			out = append(out, Violation{"C4", fmt.Sprintf("%s: Lock on %s never returned", id, inv.Lock), inv.T, inv.T})
			continue
		}
		if o.Kind == KindFail && !stopped(o) && !h.anyFault(inv.T, o.T, rec) {
			out = append(out, Violation{"C4", fmt.Sprintf("%s: Lock on %s failed outside any fault: %s", id, inv.Lock, o.Err), inv.T, o.T})
		}
		pts[inv.Lock] = append(pts[inv.Lock], pt{t: inv.T, wait: 1}, pt{t: o.T, wait: -1})
	}
	for _, a := range h.Acqs {
		end := a.End
		if a.Released {
			end = a.RelT // the lock stays busy until released, even after a loss
		}
		pts[a.Lock] = append(pts[a.Lock], pt{t: a.Start, hold: 1})
		if end != math.MaxInt64 {
			pts[a.Lock] = append(pts[a.Lock], pt{t: end, hold: -1})
		}
	}
	for lock, ps := range pts {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].t < ps[j].t })
		waiting, holding := 0, 0
		idleSince := int64(-1)
		for _, p := range ps {
			waiting += p.wait
			holding += p.hold
			idle := waiting > 0 && holding <= 0
			switch {
			case idle && idleSince < 0:
				idleSince = p.t
			case !idle && idleSince >= 0:
				switch d := p.t - idleSince; {
				case d > rec:
					// However many faults overlap, each heals within
					// seconds: a lock free for longer than the recovery
					// bound while contenders wait is deadlocked.
					out = append(out, Violation{"C4", fmt.Sprintf("%s: free for %s while contenders waited (recovery bound %s)", lock, ms(d), cfg.Recovery), idleSince, p.t})
				case d > int64(cfg.Idle) && !h.anyFault(idleSince, p.t, rec):
					out = append(out, Violation{"C4", fmt.Sprintf("%s: free for %s while contenders waited, no fault", lock, ms(d)), idleSince, p.t})
				}
				idleSince = -1
			}
		}
	}
	return out
}

// expiredWaiters is C4's check of a waiter whose own session expires: a
// Lock call in flight when an expire-session fault hit the session its
// client had then (by the client's state events) stops waiting with an
// error within Recovery of the fault's end. One that acquires is not
// judged here (a create not yet sent may queue in the next session), nor
// one that never returns (reported as such). The fault's overlap excuses
// the failure itself, and a holder that waits for the waiter keeps the
// lock busy, so without this check a waiter that outlived its session,
// and everyone queued behind, would pass until the run's deadline.
func expiredWaiters(h *History, cfg CheckConfig) []Violation {
	var out []Violation
	connected := map[string][]Event{} // worker/client -> its "connected" state events, in time order
	for _, e := range h.Events {
		if e.Kind == KindState && e.Name == "connected" {
			k := fmt.Sprintf("%s/%d", e.Worker, e.Client)
			connected[k] = append(connected[k], e)
		}
	}
	sessionAt := func(inv Event, t int64) int64 {
		cs := connected[fmt.Sprintf("%s/%d", inv.Worker, inv.Client)]
		i := sort.Search(len(cs), func(i int) bool { return cs[i].T > t })
		if i == 0 {
			return 0
		}
		return cs[i-1].Session
	}
	for _, f := range h.Faults {
		if f.Fault != FaultExpire || f.End == math.MaxInt64 {
			continue
		}
		bound := f.End + int64(cfg.Recovery)
		for id, inv := range h.Invokes {
			o, ended := h.Outcome[id]
			if inv.T >= f.Start || !ended || o.T < f.Start || o.Kind == KindOK || o.T <= bound {
				continue
			}
			if sid := sessionAt(inv, f.Start); sid == 0 || fmt.Sprintf("%#x", sid) != f.Target {
				continue
			}
			out = append(out, Violation{"C4", fmt.Sprintf("%s: Lock on %s went on %s after its session %s expired (bound %s), then failed: %s",
				id, inv.Lock, ms(o.T-f.End), f.Target, cfg.Recovery, o.Err), f.Start, o.T})
		}
	}
	return out
}

// CheckSurvival is C4's part for faults shorter than the loss limit
// (cfg.Survive): no hold is lost, no session expires, and at least one
// session was suspended by the faults (otherwise the scenario proved
// nothing). That holders keep their node and token is C3's check of the
// re-read before release. A fault the harness delivered longer than
// planned (servers slow to start on a loaded machine) and past the loss
// limit or the session timeout excuses a loss or an expiry that came at
// least that long after it began (less a ping interval, T/3: the loss
// limit counts from the last reply heard), and no later than that long
// after it ended: then losing is the library's contract, not a violation.
func CheckSurvival(h *History, cfg CheckConfig) []Violation {
	if !cfg.Survive {
		return nil
	}
	var out []Violation
	suspended := 0
	for _, e := range h.Events {
		switch {
		case e.Kind == KindLoss && !h.overran(e.T, int64(cfg.LossLimit), int64(cfg.Session/3)):
			out = append(out, Violation{"C4", fmt.Sprintf("%s: hold lost under a fault shorter than the loss limit: %s", e.HoldID(), e.Err), e.T, e.T})
		case e.Kind == KindState && e.Name == "expired" && !h.overran(e.T, int64(cfg.Session), int64(cfg.Session/3)):
			out = append(out, Violation{"C4", fmt.Sprintf("%s client %d: session %#x expired under a fault shorter than the session timeout", e.Worker, e.Client, e.Session), e.T, e.T})
		case e.Kind == KindState && e.Name == "suspended":
			suspended++
		}
	}
	if suspended == 0 && len(h.Faults) > 0 {
		out = append(out, Violation{"C4", fmt.Sprintf("%d faults and no session suspended: the faults missed", len(h.Faults)), 0, 0})
	}
	return out
}

// overran reports whether t lies in [Start+limit-early, End+limit] of a
// fault that lasted longer than limit (a positive duration).
func (h *History) overran(t, limit, early int64) bool {
	if limit <= 0 {
		return false
	}
	for _, f := range h.Faults {
		if f.End != math.MaxInt64 && f.End-f.Start > limit && t >= f.Start+limit-early && t <= f.End+limit {
			return true
		}
	}
	return false
}

// CheckCleanState is C5: after every client closed, no node is left under
// the lock paths, no server lists an ephemeral node under the scenario's
// root (dump) or holds a watch (wchs). (C5's goroutine check is each
// worker's own goleak contract, judged in CheckContracts.)
func CheckCleanState(f *FinalState) []Violation {
	if f == nil {
		return nil
	}
	var out []Violation
	for p, cs := range f.Children {
		if len(cs) > 0 {
			out = append(out, Violation{"C5", fmt.Sprintf("%s: %d nodes left: %s", p, len(cs), strings.Join(cs, ",")), 0, 0})
		}
	}
	for s, ns := range f.Ephemerals {
		if len(ns) > 0 {
			out = append(out, Violation{"C5", fmt.Sprintf("server %s: %d ephemeral nodes left: %s", s, len(ns), strings.Join(ns, ",")), 0, 0})
		}
	}
	for s, n := range f.Watches {
		if n > 0 {
			out = append(out, Violation{"C5", fmt.Sprintf("server %s: %d watches left", s, n), 0, 0})
		}
	}
	for _, e := range f.Errors {
		out = append(out, Violation{"C5", e, 0, 0})
	}
	return out
}

// CheckContracts is C7: every Lock call has exactly one outcome; a hold has
// a positive token, a session and a node under its lock path; release and
// loss refer to a hold and release happens at most once; and every explicit
// contract check of the run (KindContract) passed.
func CheckContracts(h *History) []Violation {
	var out []Violation
	outcomes := map[string]int{}
	releases := map[string]int{}
	for _, e := range h.Events {
		switch e.Kind {
		case KindOK, KindFail:
			outcomes[e.HoldID()]++
			if outcomes[e.HoldID()] == 2 {
				out = append(out, Violation{"C7", fmt.Sprintf("%s: Lock returned twice", e.HoldID()), e.T, e.T})
			}
			if _, ok := h.Invokes[e.HoldID()]; !ok {
				out = append(out, Violation{"C7", fmt.Sprintf("%s: outcome without a Lock call", e.HoldID()), e.T, e.T})
			}
			if e.Kind == KindOK && (e.Token <= 0 || e.Session == 0 || !strings.HasPrefix(e.Node, e.Lock+"/")) {
				out = append(out, Violation{"C7", fmt.Sprintf("%s: bad hold: token %d session %#x node %q", e.HoldID(), e.Token, e.Session, e.Node), e.T, e.T})
			}
		case KindRelease, KindLoss:
			if h.ByID[e.HoldID()] == nil {
				out = append(out, Violation{"C7", fmt.Sprintf("%s: %s without a hold", e.HoldID(), e.Kind), e.T, e.T})
			}
			if e.Kind == KindRelease {
				releases[e.HoldID()]++
				if releases[e.HoldID()] == 2 {
					out = append(out, Violation{"C7", fmt.Sprintf("%s: released twice", e.HoldID()), e.T, e.T})
				}
			}
		case KindContract:
			if !e.OK {
				c := "C7"
				if e.Name == ContractNoLeak {
					c = "C5" // a worker's goroutines outlived its sessions
				}
				out = append(out, Violation{c, fmt.Sprintf("contract %s %s: %s", e.Worker, e.Name, e.Err), e.T, e.T})
			}
		}
	}
	return out
}
