// Command zklock runs a command while holding a ZooKeeper lock, and shows
// who holds a lock. Its names, flags, environment variables and exit codes
// are a contract (docs/cli.md); run `zklock -h` for the summary.
//
// The command is built from verbs. A holding verb (lock, read, write,
// semaphore, elect) is a recipe: a function that turns a session and a lock
// path into an acquireFunc. Everything else (connecting, waiting with a
// deadline, --try, signals, running the child, loss, release, exit codes)
// is shared, in hold.go and child.go. To add a verb, write its recipe and
// put it in the verbs table below.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// verb is one entry of the command table.
type verb struct {
	name    string
	args    string // the synopsis after the verb name
	summary string
	also    []string // further synopses (after the verb name), with their summaries

	// Exactly one of recipe (a holding verb) and run (any other verb) is set
	// once the verb is implemented; a verb with neither is listed in the
	// usage and refused with exit 2 as not yet available.
	recipe recipe
	run    func(a *app, inv *invocation) int

	// holds: the verb takes PATH [--] [CMD [ARG...]] and holds while CMD
	// runs; otherwise it takes exactly one path, or none if pathless, or,
	// with operands (and pathless), arguments of its own, in inv.cmd.
	holds, pathless, operands bool

	// flags registers the verb's own flags (beyond the global ones).
	flags func(fs *flag.FlagSet, o *verbOpts)

	// check, if set, validates the verb's flags before anything connects;
	// it returns a usage error.
	check func(o *verbOpts) error

	// about is the verb's own help text (zklock VERB -h), example one or
	// more example command lines.
	about, example string

	// defaultPath, if set, gives the path when none is given ("" for
	// none: missing PATH).
	defaultPath func(o *verbOpts) string

	// lossDefault, if set, is the verb's loss limit when --loss-limit is
	// not given; otherwise the library's default applies.
	lossDefault *time.Duration
}

// electLossLimit is elect's default loss limit: leadership ends at the first
// suspension, as zklock.LeaderElection advises (a leader cut off from
// ZooKeeper cannot know whether another has been elected, and a leader's CMD
// usually acts on the world without fencing).
var electLossLimit = time.Duration(0)

func (v *verb) available() bool { return v.recipe != nil || v.run != nil }

// verbs is the command table, in the order the usage lists it. Adding a
// recipe to one of the not-yet-available entries is all it takes to enable
// it: parsing, the usage and the holding machinery already handle it.
var verbs = []*verb{
	{name: "lock", args: "PATH [--] [CMD [ARG...]]", summary: "exclusive: the reentrant mutex (Curator InterProcessMutex)",
		holds: true, recipe: lockRecipe,
		about: "Takes the exclusive lock at PATH (Curator's InterProcessMutex recipe: it\n" +
			"excludes a Curator InterProcessMutex, a Go zklock.Mutex and kazoo's Lock with\n" +
			"extra_lock_patterns on the same path), runs CMD while holding it, then releases.\n" +
			lossHelpDefault,
		example: "zklock lock nightly-backup -- ./backup.sh\n" +
			"zklock lock nightly-backup --id \"$(hostname)\" -c 'pg_dump app > /backup/app.sql'\n" +
			"zklock --timeout 30s lock /locks/report --try -- ./report.sh"},
	readVerb, writeVerb,
	{name: "semaphore", args: "PATH --leases N [--] [CMD [ARG...]]", summary: "one of N leases (Curator InterProcessSemaphoreV2)",
		holds: true, recipe: semaphoreRecipe, check: checkLeases,
		flags: func(fs *flag.FlagSet, o *verbOpts) {
			fs.IntVar(&o.leases, "leases", 0, "the semaphore has `N` leases (required; all participants must agree)")
		},
		about: "Takes one of N leases of the semaphore at PATH (Curator's\n" +
			"InterProcessSemaphoreV2; N=1 is the wire format of InterProcessSemaphoreMutex).\n" +
			"The token is the lease node's czxid. N is stored in PATH's node (its data, as\n" +
			"kazoo stores max_leases; Curator ignores it): a participant with another N is\n" +
			"refused (exit 2) instead of admitting itself.\n" + lossHelpDefault,
		example: "zklock semaphore crawlers --leases 4 -- ./crawl"},
	{name: "elect", args: "PATH [--id ID] [--requeue] [--latch] [--every DUR] [--] [CMD [ARG...]]",
		summary: "run CMD only while leader (Curator LeaderSelector; --latch: LeaderLatch)",
		also:    []string{"--observe PATH [--json]", "print each change of leader, without taking part"},
		holds:   true, run: runElect, lossDefault: &electLossLimit,
		flags: func(fs *flag.FlagSet, o *verbOpts) {
			fs.BoolVar(&o.requeue, "requeue", false, "campaign again after each term, on the same session, after a backoff\n"+
				"(0.25s to 0.5s, doubling up to 15s to 30s; none after a term of 30s or more)")
			fs.BoolVar(&o.latch, "latch", false, "take part as a Curator LeaderLatch (nodes ...-latch-) instead of a LeaderSelector")
			fs.BoolVar(&o.listen, "observe", false, "do not take part: print the leader of PATH, then each change, until a signal or --timeout")
			fs.BoolFunc("listen", "deprecated name of --observe (logs a warning)", func(v string) error {
				b, err := strconv.ParseBool(v)
				o.listen, o.listenAlias = b, b
				return err
			})
			fs.BoolVar(&o.json, "json", false, "with --observe: one JSON object per line")
			registerHealthFlags(fs, o)
			registerScheduleFlags(fs, o)
		},
		about: "Campaigns for leadership at PATH (Curator's LeaderSelector protocol: mutex\n" +
			"nodes ...-lock-) and runs CMD only while leader. With --latch it takes part in\n" +
			"a Curator LeaderLatch instead (nodes ...-latch-; the two protocols do not\n" +
			"exclude each other, so all participants of PATH must agree); CMD, exit\n" +
			"statuses and loss are the same, and --try and --revocable are not available.\n" +
			"--loss-limit defaults to 0 here: leadership ends at the first suspension of\n" +
			"the connection, because a leader cut off from ZooKeeper cannot know whether\n" +
			"another has been elected, and a leader's CMD usually acts without fencing.\n" +
			"Give --loss-limit DUR to ride out short suspensions.\n" +
			"\n" +
			"With --requeue, once a term is over (CMD exited, or leadership was lost) it\n" +
			"campaigns again on the same session after a backoff (0.25-0.5s, doubling up\n" +
			"to 15-30s; a term of 30s or more starts it over), so a CMD that fails at once\n" +
			"runs at most 6 times in 10s. A signal, or a campaign that fails, ends it.\n" +
			"\n" +
			"With --observe (formerly --listen, still accepted with a warning), zklock\n" +
			"takes no part: it prints the leader of the election or\n" +
			"latch at PATH, then each change, one line each (\"leader NODE TOKEN ID\", or\n" +
			"\"no leader\"; with --json one object per line), until SIGINT, SIGTERM,\n" +
			"SIGHUP or SIGQUIT, or until --timeout, and exits 0. A leader that led only briefly may\n" +
			"be skipped; leaders are printed in the order they led. It follows either\n" +
			"protocol (--latch or not), creates nothing, and takes no CMD.\n" +
			"\n" +
			"With --every DUR it runs CMD once per tick, on the leader only: ticks are\n" +
			"aligned to the wall clock in UTC (every 5m: :00, :05, ...; --offset moves\n" +
			"them), the election is at PATH/leader, and before each tick the leader claims\n" +
			"it in ZooKeeper (PATH/ticks/<unix-ms>, checked against its own node in one\n" +
			"multi), so a tick runs at most once across failovers, restarts and paused\n" +
			"leaders. CMD gets ZKLOCK_TICK (RFC 3339), ZKLOCK_TICK_MS and the leader's\n" +
			"ZKLOCK_FENCING_TOKEN; its exit status is recorded in the claim, and status\n" +
			"PATH shows the last runs and the next tick. --missed says what happens to a\n" +
			"tick missed while no one led (run-latest, the default, or skip). It campaigns\n" +
			"again after each term; a signal ends it (forwarded to a running CMD first).",
		example: "zklock elect --id \"$(hostname)\" --requeue jobs -- ./run-jobs\n" +
			"zklock elect --latch --id \"$(hostname)\" jobs -- ./run-jobs\n" +
			"zklock elect --id \"$(hostname)\" --http 127.0.0.1:9090 jobs -c './run-jobs --all'\n" +
			"zklock elect --observe jobs --json\n" +
			"zklock elect --every 5m --offset 30s --id \"$(hostname)\" reports -- ./report.sh"},
	{name: "status", args: "PATH [--json]", summary: "participants in queue order, who holds, their tokens",
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
			"zklock --namespace app status /locks/x"},
	{name: "revoke", args: "NODE-PATH", summary: "ask a revocable holder to release (Curator __REVOKE__)",
		run: runRevoke,
		about: "Writes Curator's __REVOKE__ to one participant's node, asking a revocable holder\n" +
			"(zklock --revocable, a revocable Curator lock) to release. NODE-PATH is the\n" +
			"node (see zklock status), not the lock path: a path not named as a lock node,\n" +
			"or a node with children, is refused (exit 2). A node that is gone is reported\n" +
			"but is not an error. Revocation is advisory: zklock does not wait. With\n" +
			"--namespace, NODE-PATH is relative to the namespace, as status lists it.",
		example: "zklock revoke /locks/nightly-backup/_c_0f8e...-lock-0000000007"},
	uiVerb, lsVerb, fenceVerb,
}

// completion and man are generated from this table (completion.go,
// man.go), so they join it at init rather than in its initializer.
func init() { verbs = append(verbs, completionVerb, manVerb) }

// lossHelpDefault is the loss-limit paragraph of the verbs that keep the
// library's default.
const lossHelpDefault = "--loss-limit defaults to the library's: 2/3 of the negotiated session timeout, so\n" +
	"a holder whose server restarts or fails over keeps the lock if it reconnects in\n" +
	"time, and a holder cut off by a partition is told (CMD is signalled) at least a\n" +
	"third of a session timeout before the server can hand the lock to another."

// buildVersion and buildCommit are stamped by release builds (make dist:
// -ldflags "-X main.buildVersion=v0.3.0 -X main.buildCommit=<rev>").
var buildVersion, buildCommit string

// version is zklock's version: the stamped version and commit of a release
// build (make dist); otherwise the zklock module's version as the build
// recorded it (the tag for `go install ...@vX.Y.Z`, a pseudo-version or
// "(devel)" for a build from a work tree) with the VCS revision when one
// was recorded. The Go version ends it.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return versionOf(buildVersion, buildCommit, info)
}

// versionOf is version's text for the stamped version and commit (empty
// when not stamped) and the build information (nil if there is none).
func versionOf(stamped, commit string, info *debug.BuildInfo) string {
	goVersion := runtime.Version()
	if info != nil {
		goVersion = info.GoVersion
	}
	if stamped != "" {
		if c := short(commit); c != "" && !strings.Contains(stamped, c) {
			stamped += " " + c
		}
		return stamped + " " + goVersion
	}
	if info == nil {
		return "(unknown: no build information)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && (v == "(devel)" || !strings.Contains(v, short(s.Value))) {
			v += " " + short(s.Value)
		}
	}
	return v + " " + goVersion
}

// short is a commit's first 12 characters, as git describe and
// pseudo-versions abbreviate it.
func short(commit string) string { return commit[:min(12, len(commit))] }

// verbNames lists the verbs, comma-separated, in the usage's order.
func verbNames() string {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	return strings.Join(names, ", ")
}

// suggestVerb is " (did you mean "VERB"?)" for the verb nearest to name, or "".
func suggestVerb(name string) string {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	return suggest(name, names, strconv.Quote)
}

func lookupVerb(name string) *verb {
	for _, v := range verbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

// stopSignals are the signals zklock catches: each ends a wait (exit 3) or
// a hold without CMD (exit 0), and is forwarded to CMD while it runs.
// SIGQUIT is one of them so that it does not dump zklock's goroutines and
// exit 2 with CMD still running.
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// app is one run of the command, with its outside world made explicit so
// tests can drive it in-process.
type app struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string         // the environment: read for settings, passed to the child
	signals <-chan os.Signal // SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to zklock

	// log is the one stream of what zklock says about itself (logging.go):
	// on stderr, in --log-format, at --log-level. libLog is what the
	// library's sessions log to: log when -v or --log-level asks for it,
	// otherwise silent (its warnings repeat zklock's errors).
	log    *slog.Logger
	libLog *slog.Logger

	// The statuses of zklock's own outcomes (exit.go).
	conflictExit, lostExit int

	mon       *monitor     // a holding verb's session and hold, for --http (endpoints.go)
	signalled bool         // a signal was forwarded to CMD or ended a hold in this term
	resign    <-chan error // receives when --health-cmd ends the term (health.go)
	resigned  bool         // --health-cmd ended this term
}

func main() {
	if len(os.Args) > 0 && os.Args[0] == supervisorName {
		// At once, without os.Exit's epilogue: CMD has ended, zklock waits
		// for this status, and a race-enabled build would linger a second.
		syscall.Exit(supervise(os.Args[1:]))
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, stopSignals...)
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, environ: os.Environ(), signals: sigs}
	os.Exit(a.run(os.Args[1:]))
}

// run parses args, runs the verb and returns the exit status.
func (a *app) run(args []string) int {
	a.log = slog.New(slog.DiscardHandler)
	a.libLog = a.log
	a.conflictExit, a.lostExit = exitNotAcquired, exitLost
	inv, err := parseArgs(args, a.getenv)
	if err != nil {
		var vh *verbHelp
		switch {
		case errors.As(err, &vh):
			writeVerbUsage(a.stdout, vh.verb)
			return exitOK
		case errors.Is(err, errHelp):
			writeUsage(a.stdout)
			return exitOK
		case errors.Is(err, errVersion):
			fmt.Fprintln(a.stdout, "zklock", version())
			return exitOK
		}
		return a.fail(err)
	}
	if inv.verb.check != nil {
		if err := inv.verb.check(&inv.opts); err != nil {
			return a.fail(err)
		}
	}
	cfg := &inv.cfg
	a.log = newLogger(a.stderr, cfg.logFormat, cfg.level())
	if cfg.verbose || cfg.logLevelSet {
		a.libLog = a.log
	}
	a.conflictExit, a.lostExit = cfg.conflictExit, cfg.lostExit
	if inv.verb.run != nil {
		return inv.verb.run(a, inv)
	}
	return a.runHolding(inv)
}

// getenv looks a variable up in a.environ; the last setting wins, as in exec.
func (a *app) getenv(key string) string {
	val := ""
	for _, kv := range a.environ {
		if len(kv) > len(key) && kv[len(key)] == '=' && kv[:len(key)] == key {
			val = kv[len(key)+1:]
		}
	}
	return val
}
