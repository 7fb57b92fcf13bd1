package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/zklock/zklock"
)

// scheduleJSON is the "schedule" member of `status --json` for a schedule
// path (elect --every): its claims, newest last, the missed ticks and the
// next tick.
type scheduleJSON struct {
	Every       string     `json:"every,omitempty"` // "" when no claim tells
	Offset      string     `json:"offset,omitempty"`
	Next        string     `json:"next,omitempty"` // RFC 3339, UTC
	Leader      string     `json:"leader,omitempty"`
	LeaderToken int64      `json:"leader_token,omitempty"`
	Runs        []tickJSON `json:"runs"`
	MissedTotal int        `json:"missed_total"`
	Missed      []string   `json:"missed,omitempty"` // the newest missed ticks, at most statusMissedShown
	Overdue     int        `json:"overdue,omitempty"`
}

type tickJSON struct {
	Tick     string `json:"tick"`
	Node     string `json:"node"`
	Outcome  string `json:"outcome"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
	ID       string `json:"id,omitempty"`
	Token    int64  `json:"fencing_token,omitempty"`
	Session  string `json:"session,omitempty"`
	Start    string `json:"start,omitempty"`
	End      string `json:"end,omitempty"`
	LateMs   int64  `json:"late_ms,omitempty"`
	Missed   int    `json:"missed_before,omitempty"`
}

// How much of a schedule the table shows (the JSON has every run read).
const (
	statusRunsShown   = 10
	statusMissedShown = 20
)

// scheduleStatus reads the schedule at path, or nil if path is not one
// (no claims and no leader).
func scheduleStatus(ctx context.Context, s *zklock.Session, path string) (*scheduleJSON, error) {
	h, err := zklock.ScheduleHistory(ctx, s, path)
	if err != nil || (len(h.Claims) == 0 && h.Leader == nil) {
		return nil, err
	}
	st := &scheduleJSON{Runs: make([]tickJSON, 0, len(h.Claims)), MissedTotal: h.MissedTotal, Overdue: h.Overdue}
	if h.Every > 0 {
		st.Every, st.Offset, st.Next = h.Every.String(), h.Offset.String(), stamp(h.Next)
	}
	if h.Leader != nil {
		st.Leader, st.LeaderToken = dataText(h.Leader.Data), h.Leader.Token
	}
	for _, c := range h.Claims {
		st.Runs = append(st.Runs, tickJSON{Tick: stamp(c.Tick), Node: c.Node, Outcome: c.Outcome, ExitCode: c.ExitCode,
			Error: c.Error, ID: c.ID, Token: c.Token, Session: c.Session, Start: stamp(c.Start), End: stamp(c.End),
			LateMs: c.Late.Milliseconds(), Missed: c.Missed})
	}
	for _, m := range h.Missed[max(0, len(h.Missed)-statusMissedShown):] {
		st.Missed = append(st.Missed, stamp(m))
	}
	return st, nil
}

// stamp is t in RFC 3339 (UTC, milliseconds), "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// writeScheduleTable prints a schedule's section of status: the period,
// the next tick and the leader, the last runs, the missed ticks.
func writeScheduleTable(w io.Writer, st *scheduleJSON) error {
	if st == nil {
		return nil
	}
	every := "unknown period"
	if st.Every != "" {
		every = "every " + st.Every
		if st.Offset != "0s" {
			every += " (offset " + st.Offset + ")"
		}
		every += ", next tick " + st.Next
	}
	leader := "no leader"
	if st.Leader != "" {
		leader = fmt.Sprintf("leader %s (token %d)", printable(st.Leader), st.LeaderToken)
	}
	if _, err := fmt.Fprintf(w, "schedule: %s; %s; %d run(s) kept\n", every, leader, len(st.Runs)); err != nil {
		return err
	}
	if len(st.Runs) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TICK\tOUTCOME\tEXIT\tBY\tFENCING_TOKEN\tSTARTED\tTOOK\tNOTE")
		for _, r := range st.Runs[max(0, len(st.Runs)-statusRunsShown):] {
			exit, took := "-", "-"
			if r.ExitCode != nil {
				exit = strconv.Itoa(*r.ExitCode)
			} else if r.Outcome == zklock.OutcomeOK {
				exit = "0"
			}
			start, err1 := time.Parse(time.RFC3339Nano, r.Start)
			end, err2 := time.Parse(time.RFC3339Nano, r.End)
			if err1 == nil && err2 == nil {
				took = end.Sub(start).Round(time.Millisecond).String()
			}
			var note string
			switch {
			case r.LateMs > 0:
				note = fmt.Sprintf("late %v", time.Duration(r.LateMs)*time.Millisecond)
			case r.Error != "" && r.ExitCode == nil:
				note = r.Error
			}
			if r.Missed > 0 {
				note = fmt.Sprintf("%s missed %d before", note, r.Missed)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", r.Tick, r.Outcome, exit, printable(r.ID), r.Token, r.Start, took, escapeControls(note))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if st.MissedTotal > 0 || st.Overdue > 0 {
		latest := ""
		if n := len(st.Missed); n > 0 {
			latest = " (latest " + st.Missed[n-1] + ")"
		}
		if _, err := fmt.Fprintf(w, "missed: %d tick(s) between runs%s; overdue: %d\n", st.MissedTotal, latest, st.Overdue); err != nil {
			return err
		}
	}
	return nil
}
