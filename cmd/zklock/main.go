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

func (v *verb) available() bool { return v.recipe != nil || v.run != nil }

// verbs is the command table, in the order the usage lists it. Adding a
// recipe to one of the not-yet-available entries is all it takes to enable
// it: parsing, the usage and the holding machinery already handle it.
var verbs = []*verb{
	lockVerb,
	readVerb, writeVerb,
	semaphoreVerb,
	electVerb,
	statusVerb,
	revokeVerb,
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
