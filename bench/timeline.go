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
	w := &pathWalk{contended: contended, deleted: d.countRequests(frames, 1/float64(ops)),
		p: &PathCensus{WaitedOps: map[string]float64{}, OffPathOps: map[string]float64{}, DuringHold: map[string]float64{}}}
	byConn := map[int][]frame{}
	for _, f := range frames {
		byConn[f.conn] = append(byConn[f.conn], f)
	}
	for _, fs := range byConn {
		w.conn(fs)
	}
	d.Path = w.finish()
	return d
}

// countRequests adds up the requests sent, per kind and per member, each
// worth per, and returns the time of each node's first delete request.
func (d *CensusDetail) countRequests(frames []frame, per float64) map[string]time.Duration {
	deleted := map[string]time.Duration{}
	for _, f := range frames {
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
	return deleted
}

// pathWalk gathers the path census of a run, connection by connection.
type pathWalk struct {
	p         *PathCensus
	contended bool
	deleted   map[string]time.Duration // a node's first delete request
	// ms: wake-up to hold, the predecessor's delete to the wake-up, and
	// the releasing deletes' round trips
	wakeHold, delWake, release []float64
}

// connWalk is one connection's frames read in order.
type connWalk struct {
	*pathWalk
	reqs     []sent
	idx      map[int32]int            // a request's index in reqs, by xid
	own      map[string]time.Duration // our nodes, by their create's send time
	wake     time.Duration            // the notification that woke the session (-1: none)
	wakePath string
	held     time.Duration // the hold's marker, in a held run (-1: none)
	releases []int         // the releasing deletes' indexes in reqs
}

// conn reads the frames fs of one connection.
func (w *pathWalk) conn(fs []frame) {
	c := &connWalk{pathWalk: w, idx: map[int32]int{}, own: map[string]time.Duration{}, wake: -1, held: -1}
	for _, f := range fs {
		switch {
		case f.toServer && f.path == holdMarker:
			for at := range maps.Values(c.own) { // one node held at a time
				c.end(at, f.t)
			}
			c.held = f.t
		case f.toServer:
			c.request(f)
		case f.xid == wire.XidWatchEvent:
			if _, mine := c.own[f.path]; !mine {
				c.wake, c.wakePath = f.t, f.path
			}
		default:
			c.reply(f)
		}
	}
	for _, i := range c.releases {
		if i < len(c.reqs) && c.reqs[i].reply >= 0 {
			w.release = append(w.release, ms64(int64(c.reqs[i].reply-c.reqs[i].t)))
		}
	}
}

// request is a request sent; the delete of one of our nodes releases it.
func (c *connWalk) request(f frame) {
	if at, ok := c.own[f.path]; ok && f.op == wire.OpDelete {
		if c.held < 0 {
			c.end(at, f.t)
		} else {
			for k := len(c.reqs) - 1; k >= 0 && c.reqs[k].t > c.held; k-- {
				c.p.DuringHold[opName(c.reqs[k].op)]++
			}
		}
		delete(c.own, f.path)
		c.wake, c.held = -1, -1
		c.releases = append(c.releases, len(c.reqs))
	}
	c.idx[f.xid] = len(c.reqs)
	c.reqs = append(c.reqs, sent{t: f.t, reply: -1, op: f.op, path: f.path})
}

// reply is a reply to a request; a create's makes the node ours.
func (c *connWalk) reply(f frame) {
	i, ok := c.idx[f.xid]
	if !ok {
		return
	}
	c.reqs[i].reply = f.t
	if wire.IsCreate(f.op) && f.err == 0 {
		c.own[f.path] = c.reqs[i].t
	}
}

// end ends the window from at (contended: from the wake-up) at t.
func (c *connWalk) end(at, t time.Duration) {
	if c.contended {
		at = c.wake
	}
	if at < 0 {
		return
	}
	c.p.window(c.reqs, at, t)
	if c.contended {
		c.wakeHold = append(c.wakeHold, ms64(int64(t-c.wake)))
		if d, ok := c.deleted[c.wakePath]; ok && d <= c.wake {
			c.delWake = append(c.delWake, ms64(int64(c.wake-d)))
		}
	}
}

// finish turns the sums into per-window figures and medians.
func (w *pathWalk) finish() *PathCensus {
	p := w.p
	if p.Windows > 0 {
		n := float64(p.Windows)
		p.Waited, p.Stages, p.OffPath = p.Waited/n, p.Stages/n, p.OffPath/n
		for _, ops := range []map[string]float64{p.WaitedOps, p.OffPathOps, p.DuringHold} {
			for k := range ops {
				ops[k] /= n
			}
		}
	}
	p.WakeToHoldMs, p.DeleteToWakeMs, p.ReleaseMs = median(w.wakeHold), median(w.delWake), median(w.release)
	return p
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
