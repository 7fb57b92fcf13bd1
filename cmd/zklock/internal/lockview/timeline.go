package lockview

import (
	"path"
	"slices"
	"time"

	"github.com/zklock/zklock"
)

// How long after a node went a sign of why still changes its event: the
// same session's other nodes going in the same transaction, or the same
// session queueing again in the same lock.
const amendWindow = 10 * time.Second

// gone is a recent departure of a node, kept to amend its event.
type gone struct {
	lock  string // the caller's lock path
	node  Node
	pzxid int64 // the zxid of the change that removed it, as its directory's listing says
	at    time.Time
	ev    *Event
	fixed bool // amended already
}

// Why texts of the inferred events (docs/cli.md says the same).
const (
	whyAcquired   = "the node holds by the recipe's rule (it was first in line, or the holders ahead of it went)"
	whyQueued     = "a new node that does not hold: it waits"
	whyReleased   = "the holder's node was deleted. ZooKeeper does not say by whom: a release, or another client's delete of a holder that does not queue again"
	whyRevoked    = "the holder's node was deleted after this server's revocation request: released on request"
	whyGaveUp     = "a waiter's node was deleted before it held (a timeout, a cancel, a try, or its process ended)"
	whySession    = "its session ended (expired or closed): its nodes in other directories went in the same transaction"
	whyDeletedHe  = "its node was deleted by another client: the participant queued a new node at once, as a latch does when its node vanishes"
	whyDeletedWai = "its node was deleted by another client: the waiter queued a new node at once, as Curator's waiters do when their node vanishes"
)

// diffLocked compares the nodes of a new judgement (nil: the lock went)
// with the previous one and records the events; before the first walk is
// done it records nothing (the nodes were there before the view).
func (v *View) diffLocked(ls *lockState, nodes []Node) {
	now := time.Now()
	cur := nodesByPath(nodes)
	defer func() { ls.prev = cur }()
	if !v.isReady {
		for _, n := range nodes {
			if !n.Holds {
				delete(ls.since, n.Path)
			}
		}
		return
	}
	lockPath := ls.lock.Path
	if lockPath == "" && len(nodes) > 0 {
		lockPath = lockOf(nodes[0].Path)
	}
	for p, old := range ls.prev {
		if _, ok := cur[p]; ok {
			continue
		}
		delete(ls.since, p)
		if semaphore(ls.lock.Recipe) && path.Base(path.Dir(p)) == "locks" {
			continue // a semaphore's internal lock: taken and left for every lease
		}
		kind, why := EventGaveUp, whyGaveUp
		if old.Holds {
			kind, why = EventReleased, whyReleased
			if _, asked := v.revokes[v.s.FullPath(p)]; asked {
				why = whyRevoked
				delete(v.revokes, v.s.FullPath(p))
			}
		}
		ev := eventOf(now, kind, old, why)
		v.addLocked(ls, ev)
		v.departedLocked(gone{lock: lockPath, node: old, pzxid: v.pzxidLocked(p), at: now, ev: ev})
	}
	for _, n := range nodes {
		old, seen := ls.prev[n.Path]
		switch {
		case n.Holds && (!seen || !old.Holds):
			ls.since[n.Path] = now
			v.addLocked(ls, eventOf(now, EventAcquired, n, whyAcquired))
		case !seen && !n.Holds:
			v.addLocked(ls, eventOf(now, EventQueued, n, whyQueued))
		}
		if !seen && n.sid != 0 {
			v.requeuedLocked(lockPath, n, now)
		}
	}
}

// departedLocked keeps a departure to amend, and amends it now if the same
// session's nodes left elsewhere in the same transaction: that is the
// session closing (or expiring), which deletes all its nodes at once.
func (v *View) departedLocked(g gone) {
	sid := g.node.sid
	if sid == 0 {
		return
	}
	now := g.at
	kept := v.vanished[sid][:0]
	for _, o := range v.vanished[sid] {
		if now.Sub(o.at) < amendWindow {
			kept = append(kept, o)
		}
	}
	for i := range kept {
		o := &kept[i]
		if o.pzxid != 0 && o.pzxid == g.pzxid && path.Dir(o.node.Path) != path.Dir(g.node.Path) {
			sessionEnded(o)
			sessionEnded(&g)
		}
	}
	v.vanished[sid] = append(kept, g)
}

// sessionEnded amends a departure whose session ended with it.
func sessionEnded(g *gone) {
	if g.fixed {
		return
	}
	g.fixed = true
	if g.node.Holds {
		g.ev.Kind = EventLost
	}
	g.ev.Why = whySession
}

// requeuedLocked amends the departure of the same session's node in the
// same lock, if n is that session queueing again at once: a waiter (or a
// latch participant, which leaves only by closing) whose node vanished
// under it queues again, one that gave up or released does not (a holder
// of a mutex may: a LeaderSelector with autoRequeue, a job loop; so a
// mutex holder's departure stays a release).
func (v *View) requeuedLocked(lock string, n Node, now time.Time) {
	for i := range v.vanished[n.sid] {
		o := &v.vanished[n.sid][i]
		if o.fixed || o.lock != lock || now.Sub(o.at) > amendWindow {
			continue
		}
		switch {
		case o.node.Kind == zklock.KindLatch:
			o.fixed = true
			if o.node.Holds {
				o.ev.Kind, o.ev.Why = EventLost, whyDeletedHe
			} else {
				o.ev.Kind, o.ev.Why = EventDeleted, whyDeletedWai
			}
		case !o.node.Holds:
			o.fixed = true
			o.ev.Kind, o.ev.Why = EventDeleted, whyDeletedWai
		}
	}
}

// pzxidLocked is the pzxid of the directory of the node at the caller's
// path p: the zxid of the latest change of its children.
func (v *View) pzxidLocked(p string) int64 {
	if d := v.dirs[v.s.FullPath(path.Dir(p))]; d != nil {
		return d.stat.Pzxid
	}
	return 0
}

// lockOf is the lock path of a node's caller path: its directory, or a
// semaphore's path for a node under leases/ or locks/.
func lockOf(p string) string {
	dir := path.Dir(p)
	if b := path.Base(dir); slices.Contains([]string{"leases", "locks"}, b) {
		return path.Dir(dir)
	}
	return dir
}

func semaphore(r Recipe) bool { return r == RecipeSemaphore || r == RecipeSemaphoreMutex }

func eventOf(at time.Time, kind string, n Node, why string) *Event {
	return &Event{At: at, Kind: kind, Node: n.Name, Session: n.Session, ID: n.ID, Token: n.Token, Why: why}
}
