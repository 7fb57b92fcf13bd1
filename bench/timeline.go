package bench

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// CensusDetail is what a census run's timeline shows, per operation (cycle
// or handoff): requests by kind and by the member that served them, and
// what a session waited on.
type CensusDetail struct {
	Reads  float64 `json:"reads"`
	Writes float64 `json:"writes"`
	Other  float64 `json:"other"` // sync, watch management, auth
	// ByMember: per member ("standalone", "follower1", "follower2",
	// "leader"), the reads and writes per operation that its clients sent
	// it (a follower forwards the writes to the leader).
	ByMember map[string][2]float64 `json:"by_member"`
	Path     *PathCensus           `json:"path,omitempty"`
}

// PathCensus is what a session waited on. Uncontended, a window runs from
// the create of the session's node to the delete that releases it;
// contended, from the notification that woke the waiting session to that
// delete (the harness releases as soon as the acquire returns, so the
// delete marks the moment it held) or, in a held run, to the marker the
// harness sends when the acquire returns (see holdMarker). A request sent
// in the window was waited on if its reply came back before the window
// ended; the others were off the path.
type PathCensus struct {
	Windows    int                `json:"windows"`
	Waited     float64            `json:"waited"`   // requests per window
	Stages     float64            `json:"stages"`   // sequential round trips among them, per window
	OffPath    float64            `json:"off_path"` // requests per window
	WaitedOps  map[string]float64 `json:"waited_ops"`
	OffPathOps map[string]float64 `json:"off_path_ops"`
	// HoldMs and DuringHold: a held run's hold, and the requests per
	// window sent while holding (after the hold's marker, before the
	// releasing delete).
	HoldMs     float64            `json:"hold_ms,omitempty"`
	DuringHold map[string]float64 `json:"during_hold,omitempty"`
	// Medians, ms: wake-up to hold (contended), the predecessor's delete
	// to the wake-up (contended), and the releasing delete's round trip.
	WakeToHoldMs   float64 `json:"wake_to_hold_ms,omitempty"`
	DeleteToWakeMs float64 `json:"delete_to_wake_ms,omitempty"`
	ReleaseMs      float64 `json:"release_ms"`
}

// opClass is a request's kind: "read", "write" or "other".
func opClass(op int32) string {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL, wire.OpDelete,
		wire.OpSetData, wire.OpMulti, wire.OpSetACL, wire.OpReconfig, wire.OpCheck, wire.OpDeleteContainer:
		return "write"
	case wire.OpExists, wire.OpGetData, wire.OpGetChildren, wire.OpGetChildren2, wire.OpGetACL,
		wire.OpMultiRead, wire.OpGetAllChildrenNum, wire.OpGetEphemerals:
		return "read"
	}
	return "other"
}

// sent is one request of a connection, with its reply's time (-1: none).
type sent struct {
	t, reply time.Duration
	op       int32
	path     string
}

// analyseCensus reads a census run's timeline; ops is the run's operation
// count and contended says which windows the path census takes.
func analyseCensus(frames []frame, ops int, contended bool) *CensusDetail {
	d := &CensusDetail{ByMember: map[string][2]float64{}}
	if ops == 0 {
		return d
	}
	per := 1 / float64(ops)
	deleted := map[string]time.Duration{} // a node's first delete request
	byConn := map[int][]frame{}
	for _, f := range frames {
		byConn[f.conn] = append(byConn[f.conn], f)
		if !f.toServer || f.path == holdMarker {
			continue
		}
		m := d.ByMember[f.member]
		switch opClass(f.op) {
		case "read":
			d.Reads += per
			m[0] += per
		case "write":
			d.Writes += per
			m[1] += per
		default:
			d.Other += per
		}
		d.ByMember[f.member] = m
		if _, ok := deleted[f.path]; f.op == wire.OpDelete && !ok {
			deleted[f.path] = f.t
		}
	}
	p := &PathCensus{WaitedOps: map[string]float64{}, OffPathOps: map[string]float64{}, DuringHold: map[string]float64{}}
	var wakeHold, delWake, release []float64
	for _, fs := range byConn {
		var reqs []sent
		idx := map[int32]int{}
		own := map[string]time.Duration{} // our nodes, by their create's send time
		wake, wakePath := time.Duration(-1), ""
		held := time.Duration(-1) // the hold's marker, in a held run
		var releases []int
		end := func(at, t time.Duration) { // the window from at ends at t
			if contended {
				at = wake
			}
			if at < 0 {
				return
			}
			p.window(reqs, at, t)
			if contended {
				wakeHold = append(wakeHold, ms64(int64(t-wake)))
				if d, ok := deleted[wakePath]; ok && d <= wake {
					delWake = append(delWake, ms64(int64(wake-d)))
				}
			}
		}
		for _, f := range fs {
			switch {
			case f.toServer && f.path == holdMarker:
				for at := range maps.Values(own) { // one node held at a time
					end(at, f.t)
				}
				held = f.t
				continue
			case f.toServer:
				if at, ok := own[f.path]; ok && f.op == wire.OpDelete {
					if held < 0 {
						end(at, f.t)
					} else {
						for k := len(reqs) - 1; k >= 0 && reqs[k].t > held; k-- {
							p.DuringHold[opName(reqs[k].op)]++
						}
					}
					delete(own, f.path)
					wake, held = -1, -1
					releases = append(releases, len(reqs))
				}
				idx[f.xid] = len(reqs)
				reqs = append(reqs, sent{t: f.t, reply: -1, op: f.op, path: f.path})
			case f.xid == wire.XidWatchEvent:
				if _, mine := own[f.path]; !mine {
					wake, wakePath = f.t, f.path
				}
			default:
				i, ok := idx[f.xid]
				if !ok {
					continue
				}
				reqs[i].reply = f.t
				if wire.IsCreate(f.op) && f.err == 0 {
					own[f.path] = reqs[i].t
				}
			}
		}
		for _, i := range releases {
			if i < len(reqs) && reqs[i].reply >= 0 {
				release = append(release, ms64(int64(reqs[i].reply-reqs[i].t)))
			}
		}
	}
	if p.Windows > 0 {
		n := float64(p.Windows)
		p.Waited, p.Stages, p.OffPath = p.Waited/n, p.Stages/n, p.OffPath/n
		for k := range p.WaitedOps {
			p.WaitedOps[k] /= n
		}
		for k := range p.OffPathOps {
			p.OffPathOps[k] /= n
		}
		for k := range p.DuringHold {
			p.DuringHold[k] /= n
		}
	}
	p.WakeToHoldMs, p.DeleteToWakeMs, p.ReleaseMs = median(wakeHold), median(delWake), median(release)
	d.Path = p
	return d
}

// window adds one window, from start to the releasing delete at end, of a
// connection's requests reqs (in send order).
func (p *PathCensus) window(reqs []sent, start, end time.Duration) {
	var waited []sent
	for _, r := range reqs {
		if r.t < start || r.t >= end {
			continue
		}
		name := opName(r.op)
		if r.reply >= 0 && r.reply <= end {
			waited = append(waited, r)
			p.Waited++
			p.WaitedOps[name]++
		} else {
			p.OffPath++
			p.OffPathOps[name]++
		}
	}
	p.Stages += float64(stages(waited))
	p.Windows++
}

// stages is the longest chain of requests each sent after the previous
// one's reply: the sequential round trips the window's timing shows.
func stages(rs []sent) int {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b sent) int { return cmp.Compare(a.t, b.t) })
	best := make([]int, len(s))
	out := 0
	for i := range s {
		best[i] = 1
		for j := range i {
			if s[j].reply <= s[i].t && best[j]+1 > best[i] {
				best[i] = best[j] + 1
			}
		}
		out = max(out, best[i])
	}
	return out
}
