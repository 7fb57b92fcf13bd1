package lockview

import (
	"slices"
	"time"
)

// History is a lock's recent history as its page draws it: one row per
// participant seen, with when it queued, held and left, over a window
// that ends now.
type History struct {
	From   time.Time `json:"from"`   // where the history starts: the window's start, or later if the view saw nothing before
	To     time.Time `json:"to"`     // now
	Since  string    `json:"since"`  // why it starts at From
	Rows   []Span    `json:"rows"`   // by when each began, at most maxRows (the latest)
	Waits  Stats     `json:"waits"`  // from queued to held, of the waits that ended in the window
	Holds  Stats     `json:"holds"`  // from held to released or lost, of the holds that ended in the window
	Hidden int       `json:"hidden"` // rows left out past maxRows
}

// Span is one participant's node in a lock's history. A zero Queued is a
// node seen holding first (a holder when the view started, or one that
// held at once); zero Held, one that has not held; zero End, one still
// there.
type Span struct {
	Node    string    `json:"node"`
	ID      string    `json:"id,omitempty"`
	Session string    `json:"session,omitempty"`
	Token   int64     `json:"fencing_token,omitempty"`
	Queued  time.Time `json:"queued,omitzero"`
	Held    time.Time `json:"held,omitzero"`
	End     time.Time `json:"end,omitzero"`
	How     string    `json:"how,omitempty"` // how it ended: released, lost, gave-up, deleted
}

// Stats are the p50, p99 and largest of some durations, in milliseconds.
type Stats struct {
	N   int   `json:"n"`
	P50 int64 `json:"p50_ms"`
	P99 int64 `json:"p99_ms"`
	Max int64 `json:"max_ms"`
}

// maxRows bounds the rows a history draws.
const maxRows = 40

// historyLocked builds ls's history over the window ending at now, from
// its timeline and, for the nodes there since before it, its queue.
func (ls *lockState) historyLocked(now time.Time, window time.Duration) History {
	h := History{From: now.Add(-window), To: now, Since: "the last " + window.String()}
	if ls.from.After(h.From) {
		h.From, h.Since = ls.from, "when this server first saw the lock"
		if ls.dropped {
			h.Since = "its oldest event kept (at most 200 per lock are)"
		}
	}
	byNode := map[string]*Span{}
	var order []*Span
	span := func(node string) *Span {
		if s := byNode[node]; s != nil {
			return s
		}
		s := &Span{Node: node}
		byNode[node] = s
		order = append(order, s)
		return s
	}
	for _, e := range ls.timeline {
		s := span(e.Node)
		if e.Session != "" {
			s.ID, s.Session, s.Token = e.ID, e.Session, e.Token
		}
		switch e.Kind {
		case EventQueued:
			s.Queued = e.At
		case EventAcquired:
			s.Held = e.At
		case EventReleased, EventLost, EventGaveUp, EventDeleted:
			s.End, s.How = e.At, e.Kind
		}
	}
	for _, n := range ls.lock.Queue {
		if _, ok := byNode[n.Name]; ok || n.Unread {
			continue
		}
		s := span(n.Name) // there since before the view, or its oldest events dropped
		s.ID, s.Session, s.Token = n.ID, n.Session, n.Token
		at := n.Ctime
		if at.Before(h.From) {
			at = h.From
		}
		if n.Holds {
			s.Held = at
		} else {
			s.Queued = at
		}
	}
	var waits, holds []time.Duration
	for _, s := range order {
		if !s.End.IsZero() && s.End.Before(h.From) {
			continue
		}
		if !s.Queued.IsZero() && !s.Held.IsZero() && !s.Held.Before(h.From) {
			waits = append(waits, s.Held.Sub(s.Queued))
		}
		if !s.Held.IsZero() && !s.End.IsZero() && (s.How == EventReleased || s.How == EventLost) {
			holds = append(holds, s.End.Sub(s.Held))
		}
		h.Rows = append(h.Rows, *s)
	}
	slices.SortStableFunc(h.Rows, func(a, b Span) int { return a.begin().Compare(b.begin()) })
	if len(h.Rows) > maxRows {
		h.Hidden = len(h.Rows) - maxRows
		h.Rows = h.Rows[h.Hidden:]
	}
	h.Waits, h.Holds = statsOf(waits), statsOf(holds)
	return h
}

// begin is when the span starts: queued, or else held.
func (s Span) begin() time.Time {
	if !s.Queued.IsZero() {
		return s.Queued
	}
	return s.Held
}

// statsOf is the nearest-rank p50 and p99 and the largest of ds.
func statsOf(ds []time.Duration) Stats {
	if len(ds) == 0 {
		return Stats{}
	}
	slices.Sort(ds)
	rank := func(p int) int64 { return ds[(len(ds)*p+99)/100-1].Milliseconds() }
	return Stats{N: len(ds), P50: rank(50), P99: rank(99), Max: ds[len(ds)-1].Milliseconds()}
}
