package reliability

import (
	"fmt"
	"math"
	"time"
)

// Fault names in the nemesis log.
const (
	FaultPauseClient     = "pause-client"     // SIGSTOP of a worker process
	FaultKillClient      = "kill-client"      // SIGKILL of a worker process (a new one replaces it)
	FaultBlackholeClient = "blackhole-client" // the worker's proxy drops everything
	FaultKillLeader      = "kill-leader"
	FaultKillFollower    = "kill-follower"
	FaultPauseLeader     = "pause-leader"
	FaultAllDown         = "all-servers-down"
	FaultExpire          = "expire-session"
	FaultDropCreate      = "drop-create-reply"
	FaultDropCreateLag   = "drop-create-lagging" // a dropped create reply, the client sent to a lagging follower
	FaultReapParent      = "reap-parent"
	FaultDeleteNode      = "delete-holder-node" // another client deletes the holder's node (target: the node)
	FaultWipe            = "wipe-data-dir"      // negative test of C3 only
	FaultRebuild         = "rebuild-ensemble"   // S25: the data directory wiped, holders fenced by era
	FaultRebase          = "rebase-fence"       // S25: the operator moves the fence to the new era
)

// Violation is one checker finding.
type Violation struct {
	Checker string `json:"checker"`
	Detail  string `json:"detail"`
	// From and To bound the part of the history to look at (CLOCK_MONOTONIC
	// nanoseconds, as Event.T; both 0 for a finding about the final state,
	// To may be math.MaxInt64 for a hold that never ended).
	From int64 `json:"from,omitempty"`
	To   int64 `json:"to,omitempty"`
}

// CheckConfig holds the bounds of the timing checkers.
type CheckConfig struct {
	// PauseGrace: how long after SIGCONT a paused holder may keep believing
	// it holds (C1): it must see the loss within this bound.
	PauseGrace time.Duration
	// Recovery: how long after a fault heals the system may still be slow
	// (C4): T_session + 2 elections + 2 s in the plan.
	Recovery time.Duration
	// Idle: the longest time a lock may sit free while someone waits for it
	// outside fault windows (C4).
	Idle time.Duration
	// DeleteGrace: how long after another client deleted a holder's node the
	// holder may keep believing it holds (C1): its loss signal must come
	// within this bound (the library's watch delivers it within one
	// notification). Zero means 1 s.
	DeleteGrace time.Duration
	// LossLimit is the workers' loss limit (2/3 of the session timeout by
	// default); Resume is how soon after SIGCONT a holder paused for longer
	// than that must have seen its loss or released (C6; 0: unchecked).
	LossLimit, Resume time.Duration
	// Session is the workers' session timeout.
	Session time.Duration
	// Survive: faults never outlast the loss limit (S2-S4), so a loss
	// signal or an expired session is a violation (C4), and so is a run in
	// which no session was ever suspended (the faults missed).
	Survive bool
	// Porcupine bounds the linearizability search per register (C2);
	// zero means 60 s.
	Porcupine time.Duration
}

// FinalState is what the suite observed once every client had closed (C5).
type FinalState struct {
	Children map[string][]string `json:"children,omitempty"` // lock path -> children left
	Watches  map[string]int      `json:"watches,omitempty"`  // server -> total watches (wchs)
	// Ephemerals: server -> ephemeral nodes under the scenario's root (dump).
	Ephemerals map[string][]string `json:"ephemerals,omitempty"`
	// Registers: lock path -> the final read of its ZooKeeper register.
	Registers map[string]RegisterRead `json:"registers,omitempty"`
	// Claims: the schedule's claim nodes (the schedule recipe, schedule.go).
	Claims []ClaimRead `json:"claims,omitempty"`
	Errors []string    `json:"errors,omitempty"`
}

// ContractNoLeak names the worker's goroutine-leak check in a contract event
// (judged by C5).
const ContractNoLeak = "no-goroutine-leak"

// Checkers lists C1..C8 in order (C8: the schedule's ticks, schedule.go).
var Checkers = []string{"C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"}

// CheckAll runs every checker.
func CheckAll(h *History, final *FinalState, cfg CheckConfig) []Violation {
	var v []Violation
	v = append(v, CheckExclusion(h, cfg)...)
	v = append(v, CheckFencing(h)...)
	v = append(v, CheckSetFull(h)...)
	v = append(v, CheckZKRegister(h, final, cfg.Porcupine)...)
	v = append(v, CheckDatabase(h)...)
	v = append(v, CheckTokens(h)...)
	v = append(v, CheckLiveness(h, cfg)...)
	v = append(v, CheckSurvival(h, cfg)...)
	v = append(v, CheckCleanState(final)...)
	v = append(v, CheckLossTiming(h)...)
	v = append(v, CheckResumeTiming(h, cfg)...)
	v = append(v, CheckContracts(h)...)
	v = append(v, CheckTicks(h, final)...)
	return v
}

func ms(ns int64) string { return time.Duration(ns).Round(time.Microsecond).String() }

// CheckExclusion is C1: no two valid holds of a lock overlap, where a hold
// is [Lock returned, min(Release called, loss signal)]. An overlap is
// tolerated only if the earlier holder's process was SIGSTOPped (see
// pausedHolder; or its session was expired on the server by the nemesis)
// between its acquire and the later acquire, and its hold ended within
// PauseGrace of SIGCONT (of the expiry).
func CheckExclusion(h *History, cfg CheckConfig) []Violation {
	var out []Violation
	for lock, acqs := range h.byLock() {
		var active []*Acq
		for _, b := range acqs {
			keep := active[:0]
			for _, a := range active {
				if a.End > b.Start {
					keep = append(keep, a)
				}
			}
			active = keep
			for _, a := range active {
				if a.Read && b.Read {
					continue // readers share
				}
				if h.pausedHolder(a, b, cfg) {
					continue
				}
				// The faults below count from a's Lock call, not from its
				// return: one that strikes while Lock is returning (the
				// nemesis deletes the head of the queue, which may be a
				// node whose Lock has decided but not yet returned) is the
				// same forced handover, and the client can tell them apart
				// no sooner than it hears of either.
				//
				// The nemesis expired a's session on the server outright
				// (zktest Expire): the client learns of it on its next
				// contact, so like a pause this opens a window that only
				// fencing closes. Tolerated if a's hold ended within
				// PauseGrace of the expiry.
				if x, xend := h.faultOn(FaultExpire, fmt.Sprintf("%#x", a.Session), a.Invoke, b.Start); x && a.End != math.MaxInt64 && a.End <= xend+int64(cfg.PauseGrace) {
					continue
				}
				// Another client deleted the older hold's node: a forced
				// handover, which that holder must learn of at once.
				// Tolerated only if its hold ended within DeleteGrace of the
				// deletion. The older hold is the one with the older node,
				// as for pauses: when the deletion strikes while its Lock is
				// returning, the next holder's ok may be stamped first.
				if h.deletedHolder(a, b, cfg) {
					continue
				}
				end := "never"
				if a.End != math.MaxInt64 {
					end = ms(a.End - b.Start)
				}
				out = append(out, Violation{"C1", fmt.Sprintf("%s: %s (token %d) still held when %s (token %d) acquired; ended %s later",
					lock, a.ID, a.Token, b.ID, b.Token, end), min(a.Start, b.Start), max(a.End, b.End)})
			}
			active = append(active, b)
		}
	}
	return out
}

func (c CheckConfig) deleteGrace() time.Duration {
	if c.DeleteGrace > 0 {
		return c.DeleteGrace
	}
	return time.Second
}

// deletedAt returns when the nemesis began deleting node, if it did so
// within [from, to].
func (h *History) deletedAt(node string, from, to int64) (int64, bool) {
	for _, f := range h.Faults {
		if f.Fault == FaultDeleteNode && f.Target == node && f.Start <= to && f.End >= from {
			return f.Start, true
		}
	}
	return 0, false
}

// deletedHolder reports whether the overlap of holds a and b (a's ok
// stamped first) is a forced handover: another client deleted the older
// hold's node (the lower token's) between its Lock call and the other's ok,
// and that hold ended within DeleteGrace of the deletion.
func (h *History) deletedHolder(a, b *Acq, cfg CheckConfig) bool {
	x, y := a, b
	if b.Token < a.Token && !b.Read {
		x, y = b, a
	}
	d, ok := h.deletedAt(x.Node, x.Invoke, y.Start)
	return ok && x.End != math.MaxInt64 && x.End <= d+int64(cfg.deleteGrace())
}

// pausedHolder reports whether the overlap of exclusive holds a and b (a's
// ok stamped first) is the one a paused process is allowed: the earlier
// holder, x, was SIGSTOPped between its Lock call and the other's ok, and its
// hold ended within PauseGrace of SIGCONT. The earlier holder is the one
// with the older node (lower token): a pause that falls between Lock
// returning and the worker stamping ok makes the acquisition time unknown
// anywhere in [invoke, ok], so stamps alone cannot order the two.
func (h *History) pausedHolder(a, b *Acq, cfg CheckConfig) bool {
	x, y := a, b
	if b.Token < a.Token && !b.Read {
		x, y = b, a
	}
	p, pend := h.paused(x.Worker, x.Invoke, y.Start)
	return p && x.End != math.MaxInt64 && x.End <= pend+int64(cfg.PauseGrace)
}

// CheckResumeTiming is C6's part for paused holders: a holder whose process
// was SIGSTOPped for longer than the loss limit while it held must, once
// resumed, end its hold (loss signal or release) within cfg.Resume of
// SIGCONT. The plan asks for 2/3 T + 1 s; the session counts "last heard"
// from the send time of the last answered request, so bytes that waited in
// the socket during the pause cannot postpone the loss, and the suite holds
// it to cfg.Resume.
func CheckResumeTiming(h *History, cfg CheckConfig) []Violation {
	if cfg.Resume <= 0 {
		return nil
	}
	var out []Violation
	locks := h.byLock()
	for _, f := range h.Faults {
		if f.Fault != FaultPauseClient || f.End == math.MaxInt64 || f.End-f.Start <= int64(cfg.LossLimit) {
			continue
		}
		expired := f.End-f.Start > int64(cfg.Session) // the server may have ended the session meanwhile
		for _, a := range h.Acqs {
			if a.Worker != f.Target {
				continue
			}
			held := a.Start < f.Start && a.End > f.Start
			// A Lock call in flight across a pause that outlived the
			// session, whose hold is in the session the client had when
			// the pause began, can only have succeeded before the pause:
			// its ok was stamped late, and it is a paused holder too. (A
			// Lock that went on in a new session after the pause is not,
			// nor one whose node was still behind others granted after
			// SIGCONT: the session can outlive a pause longer than its
			// timeout, as when a new ZooKeeper leader, elected during
			// the pause, starts every session's timeout afresh.)
			inFlight := expired && a.Invoke < f.Start && a.Start >= f.Start && a.Session == h.sessionAt(a.Worker, a.Client, f.Start) &&
				!grantedBehind(locks[a.Lock], a, f.End)
			if !held && !inFlight {
				continue
			}
			if a.End == math.MaxInt64 || a.End > f.End+int64(cfg.Resume) {
				end := "never"
				if a.End != math.MaxInt64 {
					end = ms(a.End - f.End)
				}
				out = append(out, Violation{"C6", fmt.Sprintf("%s: paused %s while holding (token %d), hold ended %s after SIGCONT (bound %s)",
					a.ID, ms(f.End-f.Start), a.Token, end, cfg.Resume), f.Start, max(a.End, f.End+int64(cfg.Resume))})
			}
		}
	}
	return out
}

// grantedBehind reports whether, among holds (a's lock's), another worker's
// exclusive hold with an older node (a smaller token) began after t: a lock
// grants in node order, so a's own hold began after that one's, not before
// t. (Were a's hold older, the two would overlap, which C1 judges.)
func grantedBehind(holds []*Acq, a *Acq, t int64) bool {
	if a.Read {
		return false
	}
	for _, b := range holds {
		if b.Worker != a.Worker && !b.Read && b.Token < a.Token && b.Start >= t {
			return true
		}
	}
	return false
}

// CheckTokens is C3: a hold's token is the czxid of its node and the node's
// ephemeralOwner is the hold's session (from the worker's independent read);
// tokens of a lock's successive holders increase strictly in acquisition
// order (a holder whose process was paused while acquiring may be stamped
// late, and is excused), within each ensemble era the history names.
func CheckTokens(h *History) []Violation {
	var out []Violation
	for _, e := range h.Events {
		if e.Kind != KindStat || !e.OK {
			continue
		}
		a := h.ByID[e.HoldID()]
		if a == nil {
			continue
		}
		if e.Czxid != a.Token || e.Owner != a.Session {
			out = append(out, Violation{"C3", fmt.Sprintf("%s: token %d session %#x but node %s has czxid %d owner %#x",
				a.ID, a.Token, a.Session, e.Node, e.Czxid, e.Owner), a.Start, e.T})
		}
	}
	for lock, all := range h.byLock() {
		for _, acqs := range byEra(all) {
			out = append(out, checkTokenOrder(h, lock, acqs)...)
		}
	}
	return out
}

// byEra splits a lock's acquisitions by the ensemble era of their tokens,
// keeping their order: tokens of an ensemble rebuilt from empty start over,
// and are compared only with their own era's.
func byEra(acqs []*Acq) [][]*Acq {
	var out [][]*Acq
	at := map[string]int{}
	for _, a := range acqs {
		i, ok := at[a.Era]
		if !ok {
			i = len(out)
			at[a.Era] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], a)
	}
	return out
}

// checkTokenOrder is C3's order rule on one lock's acquisitions of one era.
func checkTokenOrder(h *History, lock string, acqs []*Acq) []Violation {
	var out []Violation
	seen := map[int64]string{}
	var maxAll, maxExcl int64
	var maxAllID, maxExclID string
	for _, b := range acqs {
		if prev, dup := seen[b.Token]; dup {
			out = append(out, Violation{"C3", fmt.Sprintf("%s: %s and %s share token %d", lock, prev, b.ID, b.Token), h.ByID[prev].Start, b.Start})
		}
		seen[b.Token] = b.ID
		// An exclusive hold comes after every earlier hold; a shared
		// one after every earlier exclusive hold (readers that share
		// may be stamped in any order).
		bound, boundID := maxAll, maxAllID
		if b.Read {
			bound, boundID = maxExcl, maxExclID
		}
		if b.Token <= bound {
			a := h.ByID[boundID]
			pb, _ := h.paused(b.Worker, b.Invoke, b.Start)
			pa, _ := h.paused(a.Worker, a.Invoke, a.Start)
			// b's node deleted while its Lock was returning: b decided
			// before a (its node is older), and C1 judges its loss.
			_, db := h.deletedAt(b.Node, b.Invoke, b.Start)
			if !pa && !pb && !db {
				out = append(out, Violation{"C3", fmt.Sprintf("%s: token %d of %s not above %d of %s acquired before it", lock, b.Token, b.ID, a.Token, a.ID), min(a.Start, b.Invoke), b.Start})
			}
		}
		if b.Token > maxAll {
			maxAll, maxAllID = b.Token, b.ID
		}
		if !b.Read && b.Token > maxExcl {
			maxExcl, maxExclID = b.Token, b.ID
		}
	}
	return out
}

// CheckLossTiming is C6: a holder whose process kept running while the
// network dropped its traffic (blackhole) and that had not released when the
// blackhole began must get its loss signal before the next holder of the
// lock acquires.
func CheckLossTiming(h *History) []Violation {
	var out []Violation
	for _, acqs := range h.byLock() {
		for i, a := range acqs {
			bh, _ := h.faultOn(FaultBlackholeClient, a.Worker, a.Start, a.End)
			if !bh || i+1 >= len(acqs) {
				continue
			}
			if p, _ := h.paused(a.Worker, a.Start, a.End); p {
				continue // C1 judges paused holders
			}
			b := acqs[i+1]
			if a.Read && b.Read {
				continue
			}
			if a.Released && a.RelT < b.Start && (!a.Lost || a.RelT < a.LossT) {
				continue // released before anyone else could take it
			}
			if !a.Lost || a.LossT >= b.Start {
				out = append(out, Violation{"C6", fmt.Sprintf("%s: blackholed holder (token %d) had no loss signal before %s acquired", a.ID, a.Token, b.ID), a.Start, b.Start})
			}
		}
	}
	return out
}
