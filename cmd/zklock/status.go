package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

// statusVerb is `zklock status PATH`, and `status --deadlocks`.
var statusVerb = &verb{name: "status", args: "PATH [--json]", summary: "participants in queue order, who holds, their tokens",
	also: []string{"--deadlocks [ROOT] [--json]", "the cycles of the wait-for graph over every lock under ROOT (exit 5 if any)"},
	run:  runStatus, defaultPath: deadlocksRoot,
	flags: func(fs *flag.FlagSet, o *verbOpts) {
		fs.BoolVar(&o.json, "json", false, "print one JSON object instead of a table")
		fs.BoolVar(&o.deadlocks, "deadlocks", false, "name the deadlocks among every lock under PATH (default /locks): exit 5 if any")
	},
	about: "Lists the participants of the lock at PATH in queue order (Curator's\n" +
		"ordering): node, kind, sequence, fencing token (czxid), owning session, whether\n" +
		"it holds, and its data. With --namespace, PATH and the nodes shown are\n" +
		"relative to the namespace, and the output names it.",
	example: "zklock status nightly-backup --json\n" +
		"zklock --namespace app status /locks/x"}

// statusJSON is the `status --json` object of cli.md; the field order is
// the contract's.
type statusJSON struct {
	Path         string            `json:"path"`
	Namespace    string            `json:"namespace,omitempty"` // --namespace; path and nodes are relative to it
	Participants []participantJSON `json:"participants"`
	ClientsNote  string            `json:"clients_note,omitempty"` // why client addresses are not shown
	Schedule     *scheduleJSON     `json:"schedule,omitempty"`     // a schedule's runs (status_schedule.go)
}

type participantJSON struct {
	Node         string           `json:"node"`
	Kind         string           `json:"kind"`
	Sequence     int32            `json:"sequence"`
	FencingToken int64            `json:"fencing_token"`
	Session      string           `json:"session"`
	Holds        bool             `json:"holds"`
	Data         string           `json:"data"`             // without the owner line, which is Owner
	Owner        string           `json:"owner,omitempty"`  // the owner id the holder recorded (zklock.WithOwner)
	Client       *lockview.Client `json:"client,omitempty"` // where the session connects from (the members' cons)
	Error        string           `json:"error,omitempty"`  // why the node could not be read (an ACL); its token, session and data are then empty
}

func newStatus(path string, ps []zklock.Participant) statusJSON {
	st := statusJSON{Path: path, Participants: make([]participantJSON, 0, len(ps))}
	for _, p := range ps {
		owner, data := zklock.OwnerOf(p.Data)
		st.Participants = append(st.Participants, participantJSON{
			Node:         p.Node,
			Kind:         string(p.Kind),
			Sequence:     p.Sequence,
			FencingToken: p.Token,
			Session:      sessionHex(p.Session),
			Holds:        p.Holds,
			Data:         dataText(data),
			Owner:        owner,
			Error:        unreadable(p.Err),
		})
	}
	return st
}

// unreadable is why a participant's node could not be read, "" if it was.
func unreadable(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "zklock: ", "")
}

// sessionHex formats a session id (ephemeralOwner) as ZooKeeper does: 0x...
func sessionHex(id int64) string { return fmt.Sprintf("0x%x", uint64(id)) }

// dataText is a node's data as text, or base64 if it is not UTF-8.
func dataText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// runStatus is `zklock status PATH [--json]`. It connects, lists the
// participants and prints them; a missing path has none. With --namespace,
// PATH is the caller's (relative to the namespace), and so is the output. Everything is
// bounded by --timeout (10s if 0); failures exit 1.
func runStatus(a *app, inv *invocation) int {
	if inv.opts.deadlocks {
		return runDeadlocks(a, inv)
	}
	var (
		ps      []zklock.Participant
		clients map[int64]lockview.Client
		note    string
		sched   *scheduleJSON
	)
	connected, err := a.oneShot(inv, func(ctx context.Context, s *zklock.Session) error {
		var err error
		if ps, err = zklock.Participants(ctx, s, inv.path); err == nil && len(ps) > 0 {
			clients, note = lockview.Clients(ctx, inv.cfg.servers, inv.cfg.tls)
		}
		if err == nil {
			sched, err = scheduleStatus(ctx, s, inv.path)
		}
		return err
	})
	if err != nil {
		a.errorf("status %s: %v", inv.path, err)
		if connected && errors.Is(err, zklock.ErrInvalidPath) {
			return exitUsage
		}
		return exitError
	}
	st := newStatus(inv.path, ps)
	st.Namespace, st.ClientsNote = inv.cfg.namespace, note
	st.Schedule = sched
	for i, p := range ps {
		if c, ok := clients[p.Session]; ok {
			st.Participants[i].Client = &c
		}
	}
	if inv.opts.json {
		err = writeStatusJSON(a.stdout, st)
	} else {
		err = writeStatusTable(a.stdout, st)
		if err == nil {
			err = writeScheduleTable(a.stdout, st.Schedule)
		}
	}
	if err != nil {
		a.errorf("write stdout: %v", err)
		return exitError
	}
	return exitOK
}

func writeStatusJSON(w io.Writer, st statusJSON) error {
	enc := json.NewEncoder(jsonSafe{w})
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}

// writeStatusTable prints the same as the JSON, as an aligned table.
func writeStatusTable(w io.Writer, st statusJSON) error {
	ns := ""
	if st.Namespace != "" {
		ns = " (namespace " + st.Namespace + ")"
	}
	if _, err := fmt.Fprintf(w, "%s%s: %d participant(s)\n", printable(st.Path), ns, len(st.Participants)); err != nil {
		return err
	}
	if st.ClientsNote != "" {
		if _, err := fmt.Fprintf(w, "note: %s\n", escapeControls(st.ClientsNote)); err != nil {
			return err
		}
	}
	if len(st.Participants) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tSEQUENCE\tFENCING_TOKEN\tSESSION\tCLIENT\tHOLDS\tDATA")
	for _, p := range st.Participants {
		holds := "-"
		if p.Holds {
			holds = "yes"
		}
		data := printable(p.Data)
		if p.Error != "" {
			data = "(unreadable: " + escapeControls(p.Error) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", printable(p.Node), p.Kind, p.Sequence, p.FencingToken,
			p.Session, clientText(p.Client), holds, data)
	}
	return tw.Flush()
}
