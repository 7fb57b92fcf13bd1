package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zklock/zklock"
)

// listenJSON is one line of `elect --listen --json` (cli.md): the leader
// of PATH, or null when no one takes part. The field order is the
// contract's.
type listenJSON struct {
	Path      string      `json:"path"`
	Namespace string      `json:"namespace,omitempty"` // --namespace; path and nodes are relative to it
	Leader    *leaderJSON `json:"leader"`
}

// leaderJSON is the leader: node, kind, sequence, fencing_token and session
// mean what they mean in status --json; id is the node's data as text
// (base64 if it is not UTF-8).
type leaderJSON struct {
	Node         string `json:"node"`
	Kind         string `json:"kind"`
	Sequence     int32  `json:"sequence"`
	FencingToken int64  `json:"fencing_token"`
	Session      string `json:"session"`
	ID           string `json:"id"`
}

// runListen is `zklock elect --listen PATH`: it follows the leader of the
// election or latch at PATH without taking part (zklock.ObserveLeader) and
// prints the current leader, then each change, one line each, until
// SIGINT, SIGTERM, SIGHUP or SIGQUIT, or until --timeout (both exit 0). It exits 1
// if no server answers within the connect bound, the session ends under
// it, or ZooKeeper refuses to show PATH (an ACL: zklock.ErrNotAuthorized).
//
// The library hands over the latest leader: one that led only while the
// previous line was being written may be skipped, never printed out of
// order or twice in a row.
func (a *app) runListen(inv *invocation) int {
	cfg := &inv.cfg
	ctx, s, end, code, ok := a.connectUntilSignal(cfg, "elect --listen "+inv.path)
	if !ok {
		return code
	}
	defer end()
	leaders, err := zklock.ObserveLeader(ctx, s, inv.path)
	if err != nil {
		a.errorf("elect --listen %s: %v", inv.path, err)
		return exitCode(err)
	}
	a.log.Info("zklock: listening", "path", inv.path)
	for p := range leaders {
		if p.Err != nil { // the observation ended: retrying cannot help
			a.errorf("elect --listen %s: %v", inv.path, p.Err)
			return exitCode(p.Err)
		}
		if err := writeLeader(a.stdout, inv, p); err != nil {
			a.errorf("write stdout: %v", err)
			return exitError
		}
	}
	var sig *interrupted
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &sig):
		a.log.Info("zklock: stopped listening", "signal", signalName(sig.sig))
		return exitOK
	case errors.Is(cause, context.DeadlineExceeded):
		a.log.Info("zklock: stopped listening", "timeout", cfg.timeout)
		return exitOK
	}
	a.errorf("elect --listen %s: the session was closed", inv.path)
	return exitError
}

// writeLeader prints one leader change: "leader NODE-PATH TOKEN ID" (ID,
// the node data, last, since it may hold spaces; quoted if it holds control
// characters) or "no leader"; with --json, one listenJSON object.
func writeLeader(w io.Writer, inv *invocation, p zklock.Participant) error {
	if inv.opts.json {
		l := listenJSON{Path: inv.path, Namespace: inv.cfg.namespace}
		if p.Node != "" {
			l.Leader = &leaderJSON{Node: p.Node, Kind: string(p.Kind), Sequence: p.Sequence,
				FencingToken: p.Token, Session: sessionHex(p.Session), ID: dataText(p.Data)}
		}
		enc := json.NewEncoder(jsonSafe{w})
		enc.SetEscapeHTML(false)
		return enc.Encode(l)
	}
	if p.Node == "" {
		_, err := io.WriteString(w, "no leader\n")
		return err
	}
	line := "leader " + printable(p.Path) + " " + strconv.FormatInt(p.Token, 10)
	if id := printable(dataText(p.Data)); id != "" {
		line += " " + id
	}
	_, err := fmt.Fprintln(w, strings.TrimRight(line, " "))
	return err
}
