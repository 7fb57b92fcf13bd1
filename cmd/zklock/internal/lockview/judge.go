package lockview

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"time"

	"github.com/zklock/zklock"
)

// lockState is what the view knows of one lock directory: its latest
// judgement and its timeline.
type lockState struct {
	lock     Lock
	prev     map[string]Node      // the nodes of the previous judgement, by path
	since    map[string]time.Time // when a node was seen to begin holding
	timeline []*Event             // oldest first, at most maxTimeline
	gone     time.Time            // when the directory went, if it did (its page stays a while)
	from     time.Time            // when its history starts: when the view saw it, or its oldest event kept
	dropped  bool                 // events older than from were dropped
	holds    [sparkMinutes]minuteCount
}

// keepGone is how long the page of a deleted lock directory stays.
const keepGone = 10 * time.Minute

// judgeLocked judges the lock directory at the znode path p again, if it
// is one, and records in its timeline what changed.
func (v *View) judgeLocked(p string) {
	cp := v.callerPath(p)
	d := v.dirs[p]
	ls := v.locks[cp]
	l, ok := v.buildLocked(p, d, ls != nil)
	if !ok {
		if ls != nil && ls.gone.IsZero() {
			v.diffLocked(ls, nil)
			ls.gone = time.Now()
			ls.lock.Holders, ls.lock.Queue, ls.lock.Waiting, ls.lock.Token = []Node{}, nil, 0, 0
			ls.lock.HeldSince, ls.lock.OldestWait, ls.lock.HeldFrom = time.Time{}, time.Time{}, ""
			ls.lock.Problem = "the directory was deleted at " + ls.gone.Format(time.TimeOnly) +
				" (Curator's and zklock's lock directories are containers, which ZooKeeper deletes once empty)"
		}
		v.pruneGoneLocked()
		return
	}
	if ls != nil && !ls.gone.IsZero() {
		ls.gone = time.Time{} // made again
	}
	if ls == nil {
		ls = &lockState{prev: map[string]Node{}, since: map[string]time.Time{}, from: time.Now()}
		v.locks[cp] = ls
	}
	v.diffLocked(ls, l.Queue)
	v.heldSince(ls, &l)
	ls.lock = l
}

// pruneGoneLocked forgets the deleted lock directories past keepGone.
func (v *View) pruneGoneLocked() {
	for p, ls := range v.locks {
		if !ls.gone.IsZero() && time.Since(ls.gone) > keepGone {
			delete(v.locks, p)
		}
	}
}

// buildLocked judges the znode p (d, nil once removed) as a lock: a
// directory with lock nodes, a semaphore, or one that had lock nodes
// while watched (known).
func (v *View) buildLocked(p string, d *dir, known bool) (Lock, bool) {
	if d == nil || !d.listed {
		return Lock{}, false
	}
	if base := path.Base(p); base == "leases" || base == "locks" {
		if parent := v.dirs[path.Dir(p)]; parent != nil && slices.Contains(parent.children, "leases") {
			return Lock{}, false // part of the semaphore at the parent
		}
	}
	cp := v.callerPath(p)
	l := Lock{Path: cp, Holders: []Node{}}
	if slices.Contains(d.children, "leases") {
		v.semaphoreLocked(&l, p, d)
		return l, true
	}
	nodes, kazoo, others, unread := v.nodesLocked(d, cp)
	if len(nodes) == 0 && !known {
		return Lock{}, false
	}
	l.Queue, l.Others = nodes, others
	if kazoo {
		l.Recipe, l.Leases = RecipeSemaphore, leaseCount(d.data)
	} else {
		l.Recipe = recipeOf(nodes)
	}
	for i := range l.Queue {
		n := &l.Queue[i]
		if n.Holds {
			n.Role = "holds"
			l.Holders = append(l.Holders, *n)
		} else {
			n.Role = "waits"
			l.Waiting++
		}
	}
	l.finish(unread)
	return l, true
}

// semaphoreLocked judges the semaphore at p: holders are its lease nodes
// (the first N in creation order when the lease count N is stored, all of
// them otherwise), waiters the nodes of its internal lock.
func (v *View) semaphoreLocked(l *Lock, p string, d *dir) {
	l.Recipe, l.Others = RecipeSemaphore, len(d.children)
	var unread int
	if ld := v.dirs[p+"/leases"]; ld != nil && ld.listed {
		leases, _, _, u := v.nodesLocked(ld, l.Path+"/leases")
		unread += u
		l.Leases = max(leaseCount(d.data), leaseCount(ld.data))
		for i := range leases {
			n := &leases[i]
			n.Holds = l.Leases == 0 || i < l.Leases
			n.Role = "holds"
			if !n.Holds {
				n.Role = "waits"
				l.Waiting++
			} else {
				l.Holders = append(l.Holders, *n)
			}
		}
		l.Queue = append(l.Queue, leases...)
		l.Others--
	}
	if kd := v.dirs[p+"/locks"]; kd != nil && kd.listed {
		lockers, _, _, u := v.nodesLocked(kd, l.Path+"/locks")
		unread += u
		for i := range lockers {
			lockers[i].Role = "waits"
			if i == 0 {
				lockers[i].Role = "acquiring" // holds the internal lock: its lease is being taken
			}
			lockers[i].Holds = false
		}
		l.Waiting += len(lockers)
		l.Queue = append(l.Queue, lockers...)
		l.Others--
	}
	if l.Leases == 1 {
		l.Recipe = RecipeSemaphoreMutex
	}
	l.finish(unread)
}

// nodesLocked returns d's lock nodes, in queue order, with what was read
// of them; whether they are kazoo Semaphore leases; how many children are
// not lock nodes; and how many lock nodes were not read.
func (v *View) nodesLocked(d *dir, cp string) (nodes []Node, kazoo bool, others, unread int) {
	names, kazoo := lockNodes(d.children, d.data)
	var ps []zklock.Participant
	if kazoo {
		for _, n := range names {
			ps = append(ps, zklock.Participant{Node: n, Path: cp + "/" + n, Kind: zklock.KindLease, Holds: true})
		}
	} else {
		ps = zklock.Queue(cp, d.children)
	}
	nodes = make([]Node, len(ps))
	for i, p := range ps {
		n := Node{Name: p.Node, Path: p.Path, Kind: p.Kind, Sequence: p.Sequence, Holds: p.Holds, Waits: p.Waits}
		if st := d.nodes[p.Node]; st != nil && st.denied != "" {
			n.Unread, n.Unreadable = true, st.denied
			unread++
		} else if st != nil {
			n.sid, n.Session, n.ID, n.Owner, n.Size, n.Cut, n.Token, n.Ctime = st.sid, sessionHex(st.sid), st.id, st.owner, st.size, st.cut, st.czxid, st.ctime
		} else {
			n.Unread = true
			unread++
		}
		nodes[i] = n
	}
	return nodes, kazoo, len(d.children) - len(names), unread
}

// finish sets what follows from the holders and waiters.
func (l *Lock) finish(unread int) {
	l.Dialects = dialects(l.Queue)
	if len(l.Holders) > 0 {
		l.Token = l.Holders[0].Token
	}
	for _, n := range l.Queue {
		if !n.Holds && !n.Ctime.IsZero() && (l.OldestWait.IsZero() || n.Ctime.Before(l.OldestWait)) {
			l.OldestWait = n.Ctime
		}
	}
	denied := 0
	for _, n := range l.Queue {
		if n.Unreadable != "" {
			denied++
		}
	}
	switch {
	case denied > 0:
		l.Problem = fmt.Sprintf("%d nodes: %d of them cannot be read (%s)", len(l.Queue), denied, firstUnreadable(l.Queue))
		if unread > denied {
			l.Problem += fmt.Sprintf("; %d more are not read (the view reads at most the first ones in queue order)", unread-denied)
		}
	case unread > 0:
		l.Problem = fmt.Sprintf("%d nodes: the session, id and age of %d of them are not read (the view reads at most the first ones in queue order)",
			len(l.Queue), unread)
	}
}

// firstUnreadable is the reason of the first node in q that cannot be read.
func firstUnreadable(q []Node) string {
	for _, n := range q {
		if n.Unreadable != "" {
			return n.Name + ": " + n.Unreadable
		}
	}
	return ""
}

// heldSince sets l's hold age: from when the view saw its first holder
// begin to hold, or else (it held when first seen) from its node's ctime,
// which counts any wait before the hold too.
func (v *View) heldSince(ls *lockState, l *Lock) {
	if len(l.Holders) == 0 {
		return
	}
	h := l.Holders[0]
	if t, ok := ls.since[h.Path]; ok {
		l.HeldSince, l.HeldFrom = t, "seen"
		return
	}
	l.HeldSince, l.HeldFrom = h.Ctime, "ctime"
}

// recipeOf tells the recipe from the kinds of the nodes.
func recipeOf(nodes []Node) Recipe {
	has := map[zklock.Kind]bool{}
	for _, n := range nodes {
		has[n.Kind] = true
	}
	switch {
	case len(has) == 0, len(has) == 1 && has[zklock.KindLock], len(has) == 2 && has[zklock.KindLock] && has[zklock.KindForeign]:
		return RecipeMutex
	case len(has) == 1 && has[zklock.KindLatch]:
		return RecipeLatch
	case len(has) == 1 && has[zklock.KindForeign]:
		return RecipeKazoo
	case len(has) == 1 && has[zklock.KindLease]:
		return RecipeSemaphore
	case !has[zklock.KindLatch] && !has[zklock.KindLease] && !has[zklock.KindLock] && (has[zklock.KindRead] || has[zklock.KindWrite]):
		return RecipeReadWrite
	}
	return RecipeMixed
}

var (
	curatorName = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-`)
	gozkName    = regexp.MustCompile(`^_c_[0-9a-f]{32}-`)
	kazooName   = regexp.MustCompile(`^[0-9a-f]{32}(__r?lock__|$)`)
)

// dialects names whose node names a queue has: curator (Curator's and
// zklock's protected names), go-zookeeper, kazoo, other.
func dialects(nodes []Node) []string {
	var out []string
	for _, n := range nodes {
		d := "other"
		switch {
		case curatorName.MatchString(n.Name):
			d = "curator"
		case gozkName.MatchString(n.Name):
			d = "go-zookeeper"
		case kazooName.MatchString(n.Name):
			d = "kazoo"
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

func nodesByPath(nodes []Node) map[string]Node {
	m := make(map[string]Node, len(nodes))
	for _, n := range nodes {
		m[n.Path] = n
	}
	return m
}
