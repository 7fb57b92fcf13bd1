package reliability

import (
	"math"
	"sort"
	"strings"
)

// Acq is one acquisition reconstructed from a history.
type Acq struct {
	ID       string
	Worker   string
	Client   int
	Lock     string
	Read     bool // shared: may overlap other shared holds
	Session  int64
	Node     string
	Token    int64
	Era      string // the ensemble era of Token ("" if not logged): tokens of different eras do not compare
	Invoke   int64  // Lock called
	Start    int64  // Lock returned (the ok event)
	End      int64  // min(release called, loss signal); MaxInt64 if neither
	Released bool
	Lost     bool
	Killed   bool // its process was SIGKILLed while it held (End is then the kill)
	LossT    int64
	RelT     int64
}

// Interval is a fault from the nemesis log, [Start, End].
type Interval struct {
	Start, End int64
	Fault      string
	Target     string // worker label or server index
}

// History is a merged, time-ordered history with its acquisitions and
// faults.
type History struct {
	Events  []Event
	Acqs    []*Acq          // by Start
	ByID    map[string]*Acq // hold id -> acquisition
	Faults  []Interval
	Invokes map[string]Event // hold id -> invoke
	Outcome map[string]Event // hold id -> ok or fail
	kills   map[string]int64 // worker -> when its process was SIGKILLed
	// forgotten: the acknowledged ZooKeeper-register writes the store undid,
	// and the StoreChecker findings that name them (lostWrites).
	forgotten      map[writeKey]bool
	forgottenFinds []Violation
}

// Analyze builds a History from events (sorted here).
func Analyze(evs []Event) *History {
	SortEvents(evs)
	h := &History{Events: evs, ByID: map[string]*Acq{}, Invokes: map[string]Event{}, Outcome: map[string]Event{}}
	open := map[string]int{} // fault key -> index into Faults
	for _, e := range evs {
		switch e.Kind {
		case KindInvoke:
			h.Invokes[e.HoldID()] = e
		case KindOK:
			a := &Acq{ID: e.HoldID(), Worker: e.Worker, Client: e.Client, Lock: e.Lock, Read: e.Read, Session: e.Session, Node: e.Node,
				Token: e.Token, Era: e.Era, Start: e.T, End: math.MaxInt64}
			if inv, ok := h.Invokes[a.ID]; ok {
				a.Invoke = inv.T
			}
			h.ByID[a.ID] = a
			h.Acqs = append(h.Acqs, a)
			h.Outcome[a.ID] = e
		case KindFail:
			h.Outcome[e.HoldID()] = e
		case KindRelease:
			if a := h.ByID[e.HoldID()]; a != nil && !a.Released {
				a.Released, a.RelT = true, e.T
				a.End = min(a.End, e.T)
			}
		case KindLoss:
			if a := h.ByID[e.HoldID()]; a != nil && !a.Lost {
				a.Lost, a.LossT = true, e.T
				a.End = min(a.End, e.T)
			}
		case KindFaultStart:
			open[e.Fault+"\x00"+e.Target] = len(h.Faults)
			h.Faults = append(h.Faults, Interval{Start: e.T, End: math.MaxInt64, Fault: e.Fault, Target: e.Target})
		case KindFaultEnd:
			k := e.Fault + "\x00" + e.Target
			if i, ok := open[k]; ok {
				h.Faults[i].End = e.T
				delete(open, k)
			}
		}
	}
	sort.SliceStable(h.Acqs, func(i, j int) bool { return h.Acqs[i].Start < h.Acqs[j].Start })
	// A SIGKILLed process holds nothing from the moment it dies (its node
	// lives on until its session expires, which the next holder waits for).
	h.kills = map[string]int64{}
	for _, f := range h.Faults {
		if _, seen := h.kills[f.Target]; f.Fault == FaultKillClient && !seen {
			h.kills[f.Target] = f.Start
		}
	}
	for _, a := range h.Acqs {
		if kt, ok := h.killed(a.Worker); ok && a.Start <= kt && a.End > kt {
			a.End, a.Killed = kt, true
		}
	}
	h.forgotten, h.forgottenFinds = lostWrites(evs)
	return h
}

// sessionAt returns the session that client c of worker w had connected
// last at time t (0 if none is logged).
func (h *History) sessionAt(w string, c int, t int64) int64 {
	var sid int64
	for _, e := range h.Events {
		if e.T > t {
			break
		}
		if e.Kind == KindState && e.Name == "connected" && e.Worker == w && e.Client == c {
			sid = e.Session
		}
	}
	return sid
}

// killed returns when worker w's process was SIGKILLed, if it was.
func (h *History) killed(w string) (int64, bool) {
	t, ok := h.kills[w]
	return t, ok
}

// paused reports whether worker w's process was SIGSTOPped at some time in
// [from, to], once or in a throttling burst (whose many short stops count as
// one pause from the first to the last), and returns the end of the latest
// such pause.
func (h *History) paused(w string, from, to int64) (bool, int64) {
	p, pend := h.faultOn(FaultPauseClient, w, from, to)
	q, qend := h.faultOn(FaultThrottleClient, w, from, to)
	return p || q, max(pend, qend)
}

func (h *History) faultOn(fault, target string, from, to int64) (bool, int64) {
	found, end := false, int64(0)
	for _, f := range h.Faults {
		if f.Fault == fault && f.Target == target && f.Start <= to && f.End >= from {
			found, end = true, max(end, f.End)
		}
	}
	return found, end
}

// anyFault reports whether some fault interval, extended by grace after its
// end, intersects [from, to].
func (h *History) anyFault(from, to, grace int64) bool {
	for _, f := range h.Faults {
		end := f.End
		if end != math.MaxInt64 {
			end += grace
		}
		if f.Start <= to && end >= from {
			return true
		}
	}
	return false
}

// byLock groups acquisitions by lock, each in Start order.
func (h *History) byLock() map[string][]*Acq {
	m := map[string][]*Acq{}
	for _, a := range h.Acqs {
		m[a.Lock] = append(m[a.Lock], a)
	}
	return m
}

// Acquisitions counts successful Lock calls.
func (h *History) Acquisitions() int { return len(h.Acqs) }

// Latencies returns every acquire latency (ok - invoke), in nanoseconds.
func (h *History) Latencies() []int64 {
	out := make([]int64, 0, len(h.Acqs))
	for _, a := range h.Acqs {
		if a.Invoke > 0 {
			out = append(out, a.Start-a.Invoke)
		}
	}
	return out
}

// Recoveries returns, for each healed fault, the time from its end to the
// first acquisition after it.
func (h *History) Recoveries() []int64 {
	var out []int64
	for _, f := range h.Faults {
		if f.End == math.MaxInt64 {
			continue
		}
		i := sort.Search(len(h.Acqs), func(i int) bool { return h.Acqs[i].Start >= f.End })
		if i < len(h.Acqs) {
			out = append(out, h.Acqs[i].Start-f.End)
		}
	}
	return out
}

// Percentile returns the p-th percentile (0..100) of xs (sorted in place).
func Percentile(xs []int64, p float64) int64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	i := int(math.Ceil(p/100*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

func stopped(e Event) bool { return strings.HasPrefix(e.Err, "stopped") }
