package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

var lsVerb = &verb{
	name: "ls", args: "[--root PATH] [--max-dirs N] [--watch] [--json]",
	summary: "every lock under a root: recipe, holders, tokens, waiters (zklock ui's overview)",
	run:     runLs, pathless: true, check: checkRoot,
	flags: func(fs *flag.FlagSet, o *verbOpts) {
		registerRoot(fs, o)
		fs.BoolVar(&o.view.watch, "watch", false, "print the overview again at every change, until a signal or --timeout")
		fs.BoolVar(&o.json, "json", false, "print the JSON of /api/locks (with --watch, one object per line)")
	},
	about: "Prints the overview of zklock ui for a terminal: every lock directory under\n" +
		"--root (walked), its recipe, holders (id and session), hold age, fencing token,\n" +
		"number waiting and oldest wait. --json prints the object zklock ui serves at\n" +
		"/api/locks. With --watch it keeps the same watches as zklock ui and prints the\n" +
		"overview again after each change, until SIGINT, SIGTERM or SIGHUP, or until\n" +
		"--timeout (exit 0). The walk is bounded by --timeout (60s if 0), and by\n" +
		"--max-dirs: past it the first directories by name are shown and the rest\n" +
		"counted (\"98,000 more directories not shown\"; dirs_not_shown in the JSON).",
	example: "zklock ls\n" +
		"zklock ls --root /jobs --json\n" +
		"zklock ls --watch",
}

// lsWalkBound bounds the first walk when --timeout is 0; lsPollBound the
// first questions to the ensemble's members (srvr, cons).
const (
	lsWalkBound = 60 * time.Second
	lsPollBound = 5 * time.Second
)

// runLs is `zklock ls`: it connects, walks the root once (the same view as
// zklock ui) and prints it; with --watch, again at every change.
func runLs(a *app, inv *invocation) int {
	cfg := &inv.cfg
	ctx, s, end, code, ok := a.connectUntilSignal(cfg, "ls")
	if !ok {
		return code
	}
	defer end()
	v, err := lockview.New(s, lockview.Config{Root: inv.opts.view.root, MaxDirs: inv.opts.view.maxDirs, Logger: a.log, Members: cfg.servers, TLS: cfg.tls})
	if err != nil {
		a.errorf("ls: %v", err)
		return exitError
	}
	defer v.Close()
	if err := awaitWalk(ctx, cfg, v, inv.opts.view.root); err != nil {
		if ctx.Err() != nil {
			return exitOK
		}
		a.errorf("ls: %v", err)
		return exitError
	}
	for {
		changed := v.Changed()
		if err := writeOverview(a.stdout, v.Overview(""), inv.opts.json, inv.opts.view.watch); err != nil {
			a.errorf("write stdout: %v", err)
			return exitError
		}
		if !inv.opts.view.watch {
			return exitOK
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return exitOK
		}
		select { // one print for a burst of changes
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return exitOK
		}
	}
}

// awaitWalk waits for v's first walk of root, within --timeout
// (lsWalkBound if 0), then for the clients' addresses (the members are asked
// at once, each for at most a few seconds; lsPollBound in all). It returns
// ctx's error if ctx ends first.
func awaitWalk(ctx context.Context, cfg *config, v *lockview.View, root string) error {
	bound := lsWalkBound
	if cfg.timeout > 0 {
		bound = cfg.timeout
	}
	select {
	case <-v.Ready():
	case <-time.After(bound):
		return fmt.Errorf("the walk of %s did not finish within %v", root, bound)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-v.Polled():
	case <-time.After(lsPollBound):
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// writeOverview prints the overview as a table, or as JSON (indented, or
// one object per line when watching).
func writeOverview(w io.Writer, o lockview.Overview, asJSON, watching bool) error {
	if asJSON {
		enc := json.NewEncoder(jsonSafe{w})
		enc.SetEscapeHTML(false)
		if !watching {
			enc.SetIndent("", "  ")
		}
		return enc.Encode(o)
	}
	held, waiting := 0, 0
	for _, l := range o.Locks {
		held += len(l.Holders)
		waiting += l.Waiting
	}
	ns := ""
	if o.Namespace != "" {
		ns = " (namespace " + o.Namespace + ")"
	}
	var b strings.Builder
	if watching {
		fmt.Fprintf(&b, "-- %s\n", o.At.Local().Format(time.TimeOnly))
	}
	more := ""
	if o.NotShown > 0 {
		more = fmt.Sprintf("; %s more directories not shown", lockview.Thousands(o.NotShown))
	}
	fmt.Fprintf(&b, "%s%s: %d lock(s), %d held, %d waiting%s\n", printable(o.Root), ns, len(o.Locks), held, waiting, more)
	for _, note := range []string{o.Problem, o.ClientsNote} {
		if note != "" {
			fmt.Fprintf(&b, "note: %s\n", escapeControls(note))
		}
	}
	if len(o.Locks) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PATH\tRECIPE\tHOLDER\tSESSION\tCLIENT\tHELD\tTOKEN\tWAITING\tOLDEST_WAIT")
		for _, l := range o.Locks {
			holder, session, client, heldFor, token, oldest := "-", "-", "-", "-", "-", "-"
			if len(l.Holders) > 0 {
				h := l.Holders[0]
				holder, session, client = printable(h.ID), h.Session, clientText(h.Client)
				switch {
				case h.Unreadable != "":
					holder = "(unreadable)"
				case holder == "":
					holder = "(no id)"
				}
				if len(l.Holders) > 1 {
					holder += fmt.Sprintf(" (+%d)", len(l.Holders)-1)
				}
				heldFor, token = age(l.HeldSince, o.At), fmt.Sprint(l.Token)
			}
			if l.Waiting > 0 && !l.OldestWait.IsZero() {
				oldest = age(l.OldestWait, o.At)
			}
			recipe := string(l.Recipe)
			if l.Leases > 0 {
				recipe += fmt.Sprintf("(%d)", l.Leases)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", printable(l.Path), recipe, holder, session, client, heldFor, token, l.Waiting, oldest)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, l := range o.Locks {
			if l.Problem != "" {
				fmt.Fprintf(&b, "note: %s: %s\n", printable(l.Path), escapeControls(l.Problem))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// age is how long before now t was, to the second.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return max(now.Sub(t), 0).Truncate(time.Second).String()
}

// clientText is a session's client as a table shows it: ip:port(name),
// or - if not known.
func clientText(c *lockview.Client) string {
	switch {
	case c == nil:
		return "-"
	case c.Name != "":
		return c.Addr + "(" + printable(c.Name) + ")"
	}
	return c.Addr
}
