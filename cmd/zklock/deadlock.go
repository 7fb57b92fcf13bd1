package main

// status --deadlocks [ROOT]: the wait-for graph over every lock under ROOT
// (lockview.FindDeadlocks), and the owner id zklock records in its nodes
// (zklock.WithOwner) and passes to CMD, so that nested invocations count as
// one owner.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

// envOwner carries the owner id of the outermost zklock to the ones CMD
// runs (docs/cli.md).
const envOwner = "ZKLOCK_OWNER"

// exitDeadlock is status --deadlocks' status when it found a cycle.
const exitDeadlock = 5

// ownerID is the owner id of this zklock's nodes: ZKLOCK_OWNER, from an
// outer zklock, if it is a valid one, else this process's (host, pid,
// start: zklock.ProcessOwner).
func (a *app) ownerID() string {
	if id := a.getenv(envOwner); id != "" && len(id) <= zklock.MaxOwnerLen && !strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return id
	}
	return zklock.ProcessOwner()
}

// deadlocksJSON is the `status --deadlocks --json` object of cli.md.
type deadlocksJSON struct {
	Root        string              `json:"root"`
	Namespace   string              `json:"namespace,omitempty"`
	Locks       int                 `json:"locks"` // lock directories seen
	Deadlocks   []lockview.Deadlock `json:"deadlocks"`
	ClientsNote string              `json:"clients_note,omitempty"`
}

// runDeadlocks is `zklock status --deadlocks [ROOT]`: walk ROOT once (the
// view of ls and ui), ask the members for their clients, and print the
// cycles of the wait-for graph; exit 5 if there is one.
func runDeadlocks(a *app, inv *invocation) int {
	cfg := &inv.cfg
	ctx, s, end, code, ok := a.connectUntilSignal(cfg, "status")
	if !ok {
		return code
	}
	defer end()
	v, err := lockview.New(s, lockview.Config{Root: inv.path, Logger: a.log, Members: cfg.servers, TLS: cfg.tls})
	if err != nil {
		a.errorf("status --deadlocks: %v", err)
		return exitError
	}
	defer v.Close()
	if err := awaitWalk(ctx, cfg, v, inv.path); err != nil {
		if ctx.Err() != nil {
			return exitNotAcquired
		}
		a.errorf("status --deadlocks: %v", err)
		return exitError
	}
	o := v.Overview("")
	out := deadlocksJSON{Root: inv.path, Namespace: cfg.namespace, Locks: len(o.Locks), Deadlocks: o.Deadlocks, ClientsNote: o.ClientsNote}
	if out.Deadlocks == nil {
		out.Deadlocks = []lockview.Deadlock{}
	}
	if inv.opts.json {
		enc := json.NewEncoder(jsonSafe{a.stdout})
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	} else {
		err = writeDeadlocks(a.stdout, out)
	}
	if err != nil {
		a.errorf("write stdout: %v", err)
		return exitError
	}
	if len(out.Deadlocks) > 0 {
		return exitDeadlock
	}
	return exitOK
}

// writeDeadlocks prints the cycles, one paragraph each.
func writeDeadlocks(w io.Writer, d deadlocksJSON) error {
	var b strings.Builder
	ns := ""
	if d.Namespace != "" {
		ns = " (namespace " + d.Namespace + ")"
	}
	fmt.Fprintf(&b, "%s%s: %d lock(s), %d deadlock(s)\n", printable(d.Root), ns, d.Locks, len(d.Deadlocks))
	if d.ClientsNote != "" {
		fmt.Fprintf(&b, "note: %s\n", escapeControls(d.ClientsNote))
	}
	for i, dl := range d.Deadlocks {
		locks := make([]string, len(dl.Locks))
		for j, l := range dl.Locks {
			locks[j] = printable(l)
		}
		fmt.Fprintf(&b, "deadlock %d: %d owner(s) wait for each other in %s\n", i+1, len(dl.Owners), strings.Join(locks, ", "))
		for _, p := range dl.Owners {
			fmt.Fprintf(&b, "  owner %s: session(s) %s", escapeControls(p.Owner), strings.Join(p.Sessions, ", "))
			if len(p.Clients) > 0 {
				fmt.Fprintf(&b, " from %s", escapeControls(strings.Join(p.Clients, ", ")))
			}
			b.WriteString("\n")
			for _, h := range p.Holds {
				fmt.Fprintf(&b, "    holds %s\n", printable(h))
			}
			for _, wt := range p.Waits {
				fmt.Fprintf(&b, "    waits in %s (node %s) behind %s (node %s)\n", printable(wt.Lock), printable(wt.Node),
					escapeControls(wt.Behind), printable(wt.For))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// deadlocksRoot is status's path when none is given: /locks with
// --deadlocks, none otherwise.
func deadlocksRoot(o *verbOpts) string {
	if o.deadlocks {
		return "/locks"
	}
	return ""
}
