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
	"flag"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

// verb is one entry of the command table.
type verb struct {
	name    string
	args    string // the synopsis after the verb name
	summary string

	// Exactly one of recipe (a holding verb) and run (any other verb) is set
	// once the verb is implemented; a verb with neither is listed in the
	// usage and refused with exit 2 as not yet available.
	recipe recipe
	run    func(a *app, inv *invocation) int

	// holds: the verb takes PATH [--] [CMD [ARG...]] and holds while CMD
	// runs; otherwise it takes exactly one path.
	holds bool

	// flags registers the verb's own flags (beyond the global ones).
	flags func(fs *flag.FlagSet, o *verbOpts)

	// check, if set, validates the verb's flags before anything connects;
	// it returns a usage error.
	check func(o *verbOpts) error

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
		holds: true, recipe: lockRecipe},
	{name: "read", args: "PATH [--] [CMD [ARG...]]", summary: "shared half of the read-write lock (Curator __READ__)",
		holds: true, recipe: rwRecipe((*zklock.RWLock).ReadLock)},
	{name: "write", args: "PATH [--] [CMD [ARG...]]", summary: "exclusive half of the read-write lock (Curator __WRIT__)",
		holds: true, recipe: rwRecipe((*zklock.RWLock).WriteLock)},
	{name: "semaphore", args: "PATH --leases N [--] [CMD [ARG...]]", summary: "one of N leases (Curator InterProcessSemaphoreV2)",
		holds: true, recipe: semaphoreRecipe, check: checkLeases,
		flags: func(fs *flag.FlagSet, o *verbOpts) {
			fs.IntVar(&o.leases, "leases", 0, "number of leases (semaphore)")
		}},
	{name: "elect", args: "PATH [--id ID] [--requeue] [--] [CMD [ARG...]]", summary: "run CMD only while leader (Curator LeaderSelector)",
		holds: true, run: runElect, lossDefault: &electLossLimit,
		flags: func(fs *flag.FlagSet, o *verbOpts) {
			fs.StringVar(&o.id, "id", "", "participant id (elect)")
			fs.BoolVar(&o.requeue, "requeue", false, "campaign again after CMD ends (elect)")
		}},
	{name: "status", args: "PATH [--json]", summary: "participants in queue order, who holds, their tokens",
		run: runStatus,
		flags: func(fs *flag.FlagSet, o *verbOpts) {
			fs.BoolVar(&o.json, "json", false, "print one JSON object (status)")
		}},
	{name: "revoke", args: "NODE-PATH", summary: "ask a revocable holder to release (Curator __REVOKE__)",
		run: runRevoke},
}

// rwRecipe is the recipe of one half of the read-write lock.
func rwRecipe(half func(*zklock.RWLock) *zklock.RWHalf) recipe {
	return func(s *zklock.Session, path string, o *verbOpts) (acquireFunc, error) {
		rw, err := zklock.NewRWLock(s, path, o.lockOptions()...)
		if err != nil {
			return nil, err
		}
		return acquireOf(half(rw), nil)
	}
}

func lookupVerb(name string) *verb {
	for _, v := range verbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

// app is one run of the command, with its outside world made explicit so
// tests can drive it in-process.
type app struct {
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	environ []string         // the environment: read for settings, passed to the child
	signals <-chan os.Signal // SIGINT, SIGTERM and SIGHUP sent to zklock
	log     *slog.Logger     // -v: to stderr; otherwise silent
}

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, environ: os.Environ(), signals: sigs}
	os.Exit(a.run(os.Args[1:]))
}

// run parses args, runs the verb and returns the exit status.
func (a *app) run(args []string) int {
	a.log = slog.New(slog.DiscardHandler)
	inv, err := parseArgs(args, a.getenv)
	if err != nil {
		if err == errHelp {
			writeUsage(a.stdout)
			return exitOK
		}
		return a.fail(err)
	}
	if inv.verb.check != nil {
		if err := inv.verb.check(&inv.opts); err != nil {
			return a.fail(err)
		}
	}
	if inv.cfg.verbose {
		a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
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
