package lockview

import (
	"slices"
	"time"
)

// How much history the view keeps: at most maxTimeline events per lock
// and maxEvents in all (the oldest go first, whichever lock they are
// of); holds are counted per minute for the last sparkMinutes.
const (
	maxTimeline  = 200
	maxEvents    = 50_000
	sparkMinutes = 30
)

// evRef is an event in the order the view recorded them, across locks.
type evRef struct {
	ls *lockState
	ev *Event
}

// addLocked records e in ls's timeline, dropping the lock's oldest past
// maxTimeline and the view's oldest past maxEvents; an acquisition counts
// in the lock's sparkline.
func (v *View) addLocked(ls *lockState, e *Event) {
	if len(ls.timeline) == maxTimeline {
		ls.dropOldest()
		v.total--
	}
	ls.timeline = append(ls.timeline, e)
	if e.Kind == EventAcquired {
		ls.countHold(e.At)
	}
	v.events = append(v.events, evRef{ls, e})
	v.total++
	for v.total > maxEvents && len(v.events) > 0 {
		r := v.events[0]
		v.events = v.events[1:]
		if len(r.ls.timeline) > 0 && r.ls.timeline[0] == r.ev {
			r.ls.dropOldest()
			v.total--
		}
	}
	if len(v.events) > 2*maxEvents { // refs of events a lock dropped itself
		v.events = slices.DeleteFunc(slices.Clone(v.events), func(r evRef) bool { return !slices.Contains(r.ls.timeline, r.ev) })
	}
}

// dropOldest forgets ls's oldest event; its history now starts after it.
func (ls *lockState) dropOldest() {
	ls.from = ls.timeline[0].At
	ls.timeline[0] = nil
	ls.timeline = ls.timeline[1:]
	ls.dropped = true
}

// countHold counts an acquisition at t in its minute.
func (ls *lockState) countHold(t time.Time) {
	m := t.Unix() / 60
	c := &ls.holds[m%sparkMinutes]
	if c.minute != m {
		*c = minuteCount{minute: m}
	}
	c.n++
}

// recentHolds is the number of acquisitions in each of the last
// sparkMinutes minutes, the oldest first; nil if none.
func (ls *lockState) recentHolds(now time.Time) []int {
	out := make([]int, sparkMinutes)
	last, total := now.Unix()/60, 0
	for i := range out {
		m := last - int64(sparkMinutes-1-i)
		if c := ls.holds[m%sparkMinutes]; c.minute == m {
			out[i] = c.n
			total += c.n
		}
	}
	if total == 0 {
		return nil
	}
	return out
}

type minuteCount struct {
	minute int64 // Unix minutes
	n      int
}
