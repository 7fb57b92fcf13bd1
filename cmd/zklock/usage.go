package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

const usageHead = `zklock runs a command while holding a ZooKeeper lock, and shows who holds a lock.
Locks are the zklock library's recipes, wire-compatible with Apache Curator (and kazoo).

Usage:
  zklock [flags] VERB [flags] ARGS...

Verbs:
`

const usageTail = `
PATH is a znode path; without a leading "/" it is placed under /locks/
("zklock lock nightly-backup" uses /locks/nightly-backup). With --namespace NS,
every path (PATH, NODE-PATH, the nodes printed and ZKLOCK_NODE) is relative to
/NS, as in a Curator client built with namespace(NS): "zklock --namespace app
lock /locks/x" and "zklock lock /app/locks/x" take the same lock.

Flags, a verb's own included, go before or after the verb; for a holding verb
they may also follow PATH. The first argument after PATH that is not a flag
starts CMD; put "--" before a CMD that starts with "-". 'zklock VERB -h' (or
'zklock help VERB') shows a verb's flags, defaults and an example.

A holding verb connects, takes the lock (waiting, or with --try only if it is
free now), then runs CMD with these variables added to its environment:
  ZKLOCK_PATH            the lock path (after the /locks/ rule)
  ZKLOCK_NODE            full path of the znode this process holds
  ZKLOCK_FENCING_TOKEN   czxid of that znode, in decimal: greater than every earlier holder's
  ZKLOCK_FENCING_ERA     the ensemble's era (zklock fence era), to pass to fence.CheckEra with the token
  ZKLOCK_NAMESPACE       the namespace, if any (the two paths are relative to it)
SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to zklock are forwarded to CMD (to its
process group, unless stdin is a terminal). If the lock is lost while CMD runs,
CMD gets SIGTERM, then SIGKILL after --kill-grace. On Linux, if zklock itself is
killed (kill -9, the OOM killer), CMD and every process it started get SIGKILL
at once. The node is deleted and the session closed before zklock exits. With
no CMD, zklock prints "NODE TOKEN" on one line and holds until SIGINT, SIGTERM,
SIGHUP or SIGQUIT (then releases and exits 0) or until the lock is lost (exit 4).

--timeout bounds connecting and waiting together. With --timeout 0, connecting
is bounded by 10s, and so is the single attempt of --try.

Environment (a flag given on the command line wins; an empty variable is unset):
  ZKLOCK_SERVERS           --servers
  ZKLOCK_NAMESPACE         --namespace
  ZKLOCK_SESSION_TIMEOUT   --session-timeout
  ZKLOCK_TIMEOUT           --timeout
  ZKLOCK_AUTH              --auth (read, then removed from CMD's environment)
  ZKLOCK_AUTH_FILE         --auth-file
  ZKLOCK_ON_UNREACHABLE    --on-unreachable
  ZKLOCK_LOSS_LIMIT        --loss-limit
  ZKLOCK_TLS_CA            --tls-ca
  ZKLOCK_TLS_CERT          --tls-cert
  ZKLOCK_TLS_KEY           --tls-key
  ZKLOCK_TLS_SERVER_NAME   --tls-server-name
  ZKLOCK_LOG_FORMAT        --log-format
  ZKLOCK_LOG_LEVEL         --log-level
  ZKLOCK_CONFLICT_EXIT_CODE  --conflict-exit-code
  ZKLOCK_LOST_EXIT_CODE    --lost-exit-code

Log: every line zklock prints about itself at run time goes to stderr through
one stream, --log-format text ("zklock: MESSAGE key=value ...") or json (one
object a line: time, level, msg, and path, node, token, session, ...), at
--log-level (default warn: errors and warnings; -v: info). Usage errors are
printed plainly. CMD's own output is CMD's.

Endpoints (--http ADDR, holding verbs): GET /healthz answers 200 while the
session is usable (connected, or suspended for less than --loss-limit) and 503
otherwise; GET /leader 200 only while this process leads (elect) or holds the
lock, 503 otherwise: a readiness probe for a leader-only service; GET /metrics
the Prometheus text format, the names of contrib/prometheus (zklock_leader{path,
recipe}, zklock_sessions{state}, zklock_session_state_changes_total{state},
zklock_acquire_retries_total, zklock_losses_total{cause,recipe},
zklock_hold_seconds, ...). All are answered from what
the session has seen, with no ZooKeeper request. ADDR must be loopback unless
--insecure-listen; requests for another Host than ADDR's (or --allowed-hosts)
get 403. The server stops with zklock.

Exit status:
  CMD's     CMD ran and exited on its own while the lock was held
            (128+S if CMD was killed by signal S); outcome=child, with a
            warning if it equals --conflict-exit-code or --lost-exit-code
  0         no CMD: released after SIGINT/SIGTERM/SIGHUP/SIGQUIT; status:
            printed; elect --observe: ended by one of those signals or --timeout
  1         error: cannot connect, ZooKeeper refused an operation (not
            authorized: an ACL), bad ACL or auth
  2         usage: bad flag, bad path (revoke: not a lock node), missing argument
  3         not acquired (--conflict-exit-code N, as flock -E): --timeout
            elapsed, --try found the lock taken, or a signal
            (SIGINT/SIGTERM/SIGHUP/SIGQUIT) arrived while waiting; CMD did not
            run; outcome=not-acquired
  4         the lock was lost (or revoked, --revocable) while held; CMD was
            signalled (--lost-exit-code N); outcome=lost
  126, 127  CMD could not be started, or was not found; the lock was not taken
zklock logs each of its own outcomes with outcome=NAME and exit_code=N, and
CMD's status with outcome=child, so that they can be told apart; and
--conflict-exit-code and --lost-exit-code move 3 and 4 out of CMD's range.
`

// writeVerbUsage prints one verb's help: synopsis, what it does, its own
// flags, an example, and the global flags.
func writeVerbUsage(w io.Writer, v *verb) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  zklock [flags] %s %s\n", v.name, v.args)
	for i := 0; i+1 < len(v.also); i += 2 {
		fmt.Fprintf(&b, "  zklock [flags] %s %s\n", v.name, v.also[i])
	}
	fmt.Fprintf(&b, "\n%s.\n", v.summary)
	for i := 0; i+1 < len(v.also); i += 2 {
		fmt.Fprintf(&b, "%s %s: %s.\n", v.name, v.also[i], v.also[i+1])
	}
	if v.about != "" {
		b.WriteString("\n" + v.about + "\n")
	}
	if own := verbFlags(v); len(own) > 0 {
		fmt.Fprintf(&b, "\nFlags of %s:\n", v.name)
		for _, f := range own {
			name, usage := flag.UnquoteUsage(f)
			line := "--" + f.Name
			if len(f.Name) == 1 {
				line = "-" + f.Name // -c, as flock's
			}
			if name != "" && !isBool(f) {
				line += " " + name
			}
			fmt.Fprintf(&b, "  %-28s %s\n", line, usage)
		}
	}
	if v.example != "" {
		b.WriteString("\nExample:\n")
		for _, l := range strings.Split(v.example, "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("\nGlobal flags (before or after the verb):\n")
	writeGlobalFlags(&b)
	b.WriteString("\nRun 'zklock -h' for the environment variables and exit statuses.\n")
	_, _ = io.WriteString(w, b.String())
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// writeGlobalFlags lists the global flags, from the settings table.
func writeGlobalFlags(b *strings.Builder) {
	for _, s := range settings {
		line := fmt.Sprintf("--%s %s", s.flag, s.meta)
		def := ""
		if s.def != "" {
			def = " (default " + s.def + ")"
		}
		help := strings.ReplaceAll(s.help, "\n", "\n"+strings.Repeat(" ", 31))
		fmt.Fprintf(b, "  %-28s %s%s\n", line, help, def)
	}
	fmt.Fprintf(b, "  %-28s %s\n", "--try", "do not wait: take the lock only if it is free now")
	fmt.Fprintf(b, "  %-28s %s\n", "-v", "log what zklock does (connecting, acquired, state changes): --log-level info")
	fmt.Fprintf(b, "  %-28s %s\n", "--version", "print zklock's version and exit")
}

// writeUsage prints the usage: verbs from the command table, flags from the
// settings table, then the fixed text.
func writeUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(usageHead)
	line := func(syn, summary string) {
		if len(syn) > 34 {
			fmt.Fprintf(&b, "  %s\n  %-34s  %s", syn, "", summary)
		} else {
			fmt.Fprintf(&b, "  %-34s  %s", syn, summary)
		}
	}
	for _, v := range verbs {
		line(v.name+" "+v.args, v.summary)
		if !v.available() {
			b.WriteString(" [not yet available]")
		}
		b.WriteString("\n")
		for i := 0; i+1 < len(v.also); i += 2 {
			line(v.name+" "+v.also[i], v.also[i+1])
			b.WriteString("\n")
		}
	}
	b.WriteString("\nFlags:\n")
	writeGlobalFlags(&b)
	fmt.Fprintf(&b, "  %-28s %s\n", "--revocable", "holding verbs: hold revocably; a revocation request (zklock revoke,\n"+
		strings.Repeat(" ", 31)+"Curator Revoker) ends CMD as a loss does, exit 4")
	fmt.Fprintf(&b, "  %-28s %s\n", "--leases N", "semaphore: number of leases")
	fmt.Fprintf(&b, "  %-28s %s\n", "--id ID, --data TEXT", "holding verbs: the node's data (status, ls and ui show it; default:\n"+
		strings.Repeat(" ", 31)+"this host's address); elect: the participant id")
	fmt.Fprintf(&b, "  %-28s %s\n", "-c STRING", "holding verbs: run STRING with /bin/sh -c, instead of CMD")
	fmt.Fprintf(&b, "  %-28s %s\n", "--http ADDR", "holding verbs: serve /healthz, /leader, /metrics on ADDR (loopback\n"+
		strings.Repeat(" ", 31)+"unless --insecure-listen; see below)")
	fmt.Fprintf(&b, "  %-28s %s\n", "--requeue", "elect: campaign again after each term, on the same session, with a backoff")
	fmt.Fprintf(&b, "  %-28s %s\n", "--health-cmd CMD", "elect: lead only while CMD passes (--health-interval DUR, 10s;\n"+
		strings.Repeat(" ", 31)+"--health-failures K, 3, in a row resign)")
	fmt.Fprintf(&b, "  %-28s %s\n", "--latch", "elect: take part as a Curator LeaderLatch (nodes ...-latch-)")
	fmt.Fprintf(&b, "  %-28s %s\n", "--every DUR, --offset DUR", "elect: run CMD once per tick of the wall clock, on the leader only,\n"+
		strings.Repeat(" ", 31)+"each tick claimed once (CMD gets ZKLOCK_TICK); --missed run-latest|skip")
	fmt.Fprintf(&b, "  %-28s %s\n", "--observe", "elect: print the leader, then each change; take no part (old name --listen)")
	fmt.Fprintf(&b, "  %-28s %s\n", "--json", "status: print one JSON object; elect --observe: one per line")
	fmt.Fprintf(&b, "  %-28s %s\n", "--root PATH", "ui, ls: show the locks under PATH (default /locks)")
	fmt.Fprintf(&b, "  %-28s %s\n", "--max-dirs N", "ui, ls: watch at most N directories under the root (default 2000)")
	fmt.Fprintf(&b, "  %-28s %s\n", "--listen ADDR, --allow-revoke", "ui: serve on ADDR (default 127.0.0.1:8080); offer revocation")
	fmt.Fprintf(&b, "  %-28s %s\n", "--watch", "ls: print again at every change")
	b.WriteString(usageTail)
	_, _ = io.WriteString(w, b.String())
}
