package lockview

import (
	"context"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/zklock/zklock"
)

// A Schedule is what a lock page shows of the schedule whose election is
// that lock (zklock.Schedule, zklock elect --every: the election at
// PATH/leader, the claims at PATH/ticks): the next tick, the last runs and
// their outcomes, the missed ticks.
type Schedule struct {
	Path    string        `json:"path"` // the schedule's path, the lock's parent
	Every   string        `json:"every,omitempty"`
	Offset  string        `json:"offset,omitempty"`
	Next    time.Time     `json:"next,omitzero"`
	Runs    []ScheduleRun `json:"runs"` // the newest first, at most ScheduleRunsShown
	Kept    int           `json:"kept"` // the claims kept in ZooKeeper
	Missed  int           `json:"missed"`
	Overdue int           `json:"overdue,omitempty"`
	Problem string        `json:"problem,omitempty"` // why the claims could not be read
}

// A ScheduleRun is one claimed tick.
type ScheduleRun struct {
	Tick    time.Time `json:"tick"`
	Outcome string    `json:"outcome"` // ok, failed, running, abandoned, unreadable
	Exit    string    `json:"exit,omitempty"`
	ID      string    `json:"id,omitempty"`
	Token   int64     `json:"fencing_token,omitempty"`
	Took    string    `json:"took,omitempty"`
	Note    string    `json:"note,omitempty"`
}

// ScheduleRunsShown is how many runs a lock page shows.
const ScheduleRunsShown = 10

// scheduleRead bounds the read of a schedule's claims for a page.
const scheduleRead = 3 * time.Second

// Schedule returns the schedule whose election is the lock at the caller's
// path p, or nil if p is not one (its name is not "leader", or its parent
// has no "ticks" child). It reads the claims (zklock.ScheduleHistory), so
// it costs a read per claim kept: a page asks for it when it renders.
func (v *View) Schedule(p string) *Schedule {
	if path.Base(p) != "leader" || p == "/leader" {
		return nil
	}
	parent := path.Dir(p)
	v.mu.Lock()
	d := v.dirs[v.s.FullPath(parent)]
	is := d != nil && slices.Contains(d.children, "ticks")
	v.mu.Unlock()
	if !is {
		return nil
	}
	ctx, cancel := context.WithTimeout(v.ctx, scheduleRead)
	defer cancel()
	sc := &Schedule{Path: parent, Runs: []ScheduleRun{}}
	h, err := zklock.ScheduleHistory(ctx, v.s, parent)
	if err != nil {
		sc.Problem = err.Error()
		return sc
	}
	if h.Every > 0 {
		sc.Every, sc.Offset, sc.Next = h.Every.String(), h.Offset.String(), h.Next
	}
	sc.Kept, sc.Missed, sc.Overdue = len(h.Claims), h.MissedTotal, h.Overdue
	for i := len(h.Claims) - 1; i >= 0 && len(sc.Runs) < ScheduleRunsShown; i-- {
		c := h.Claims[i]
		r := ScheduleRun{Tick: c.Tick, Outcome: c.Outcome, ID: c.ID, Token: c.Token}
		if c.ExitCode != nil {
			r.Exit = strconv.Itoa(*c.ExitCode)
		}
		if !c.End.IsZero() && !c.Start.IsZero() {
			r.Took = c.End.Sub(c.Start).Round(time.Millisecond).String()
		}
		switch {
		case c.Late > 0:
			r.Note = "ran " + c.Late.Round(time.Millisecond).String() + " late"
		case c.Error != "" && c.ExitCode == nil:
			r.Note = c.Error
		}
		if c.Missed > 0 {
			r.Note += " (" + strconv.Itoa(c.Missed) + " missed before)"
		}
		sc.Runs = append(sc.Runs, r)
	}
	return sc
}
