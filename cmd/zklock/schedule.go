package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock"
)

// scheduleOpts are elect's schedule flags: --every and what goes with it.
type scheduleOpts struct {
	every   time.Duration // --every: run CMD once per tick as leader (0: not a schedule)
	offset  time.Duration // --offset
	missed  string        // --missed: run-latest or skip
	history int           // --history: claims kept
}

// The variables added to the child's environment on each tick (cli.md),
// beside ZKLOCK_FENCING_TOKEN (the leader's token).
const (
	envTick   = "ZKLOCK_TICK"    // the tick's time, RFC 3339 in UTC
	envTickMs = "ZKLOCK_TICK_MS" // the same, in Unix milliseconds: the claim node's name
)

func registerScheduleFlags(fs *flag.FlagSet, o *verbOpts) {
	fs.DurationVar(&o.sched.every, "every", 0, "run CMD once per tick of `DUR` (e.g. 5m), aligned to the wall clock (UTC), on the\n"+
		"leader only: each tick is claimed once in ZooKeeper (PATH/ticks) before CMD runs")
	fs.DurationVar(&o.sched.offset, "offset", 0, "with --every: ticks `DUR` after the period's boundaries (--every 1h --offset 5m: at :05)")
	fs.StringVar(&o.sched.missed, "missed", "run-latest", "with --every: ticks missed while no one led (or CMD still ran):\n"+
		"run-latest runs the latest of them at once, late; skip waits for the next tick")
	fs.IntVar(&o.sched.history, "history", zklock.DefaultTickHistory, "with --every: the number of claims kept (status shows them)")
}

// checkSchedule refuses, before anything connects, what does not go with
// --every.
func checkSchedule(inv *invocation) error {
	o := &inv.opts
	if o.sched.every == 0 {
		if o.sched.offset != 0 || o.sched.missed != "run-latest" || o.sched.history != zklock.DefaultTickHistory {
			return usagef("elect: --offset, --missed and --history go with --every")
		}
		return nil
	}
	switch {
	case len(inv.cmd) == 0:
		return usagef("elect --every: missing CMD (it runs once per tick)")
	case o.latch || o.listen || inv.cfg.try || o.revocable:
		return usagef("elect --every takes no --latch, --observe, --try or --revocable")
	}
	if _, err := zklock.ParseMissedTicks(o.sched.missed); err != nil {
		return usagef("elect: invalid --missed %q: run-latest or skip", o.sched.missed)
	}
	every, offset := o.sched.every, o.sched.offset
	switch {
	case every < zklock.MinTickPeriod || every > zklock.MaxTickPeriod:
		return usagef("elect: --every %v outside [%v, %v]", every, zklock.MinTickPeriod, zklock.MaxTickPeriod)
	case every%time.Millisecond != 0 || offset%time.Millisecond != 0:
		return usagef("elect: --every %v and --offset %v must be whole milliseconds", every, offset)
	case offset < 0 || offset >= every:
		return usagef("elect: --offset %v outside [0, --every)", offset)
	case o.sched.history < 1 || o.sched.history > zklock.MaxTickHistory:
		return usagef("elect: --history %d outside [1, %d]", o.sched.history, zklock.MaxTickHistory)
	}
	return nil
}

// scheduleOptions are the library options of the schedule flags.
func (o *verbOpts) scheduleOptions() []zklock.ScheduleOption {
	missed, _ := zklock.ParseMissedTicks(o.sched.missed)
	opts := []zklock.ScheduleOption{zklock.WithOffset(o.sched.offset), zklock.WithMissed(missed), zklock.WithHistory(o.sched.history)}
	if id := o.nodeData(); id != "" {
		opts = append(opts, zklock.WithScheduleID(id))
	}
	if o.acl != nil {
		opts = append(opts, zklock.WithScheduleACL(o.acl))
	}
	return opts
}

// tickError is CMD's non-zero exit status on a tick, recorded in its claim
// (exit_code).
type tickError int

func (e tickError) Error() string { return "exit status " + strconv.Itoa(int(e)) }
func (e tickError) ExitCode() int { return int(e) }

// runSchedule is `elect --every DUR PATH -- CMD`: connect, take part in the
// schedule at PATH (a zklock.Schedule: the election at PATH/leader, the
// claims at PATH/ticks) and, while leader, run CMD once per tick, with the
// tick's time (ZKLOCK_TICK, ZKLOCK_TICK_MS) and the leader's fencing token
// (ZKLOCK_FENCING_TOKEN); its exit status is recorded in the tick's claim.
// After a term it campaigns again on the same session. A signal is
// forwarded to a running CMD and ends zklock once CMD has exited; between
// ticks it ends zklock at once. zklock exits with the status of the last
// CMD it ran (0 if none), or 1 on an error that ends the schedule.
func (a *app) runSchedule(inv *invocation) int {
	if _, err := exec.LookPath(inv.cmd[0]); err != nil {
		return a.cannotStart(err)
	}
	cfg := &inv.cfg
	a.mon = newMonitor(inv.path, cfg)
	ictx, stop := a.interruptible(context.Background())
	s, err := a.connect(ictx, cfg)
	stop()
	if err != nil {
		if sig := signalled(ictx); sig != nil {
			return a.notAcquired(inv, sig)
		}
		return a.outcome(exitError, "%s: %v", inv.path, err)
	}
	defer s.Close()
	a.mon.session = s
	srv, err := a.serveHTTP(inv)
	if err != nil {
		return a.fail(err)
	}
	defer srv.stop()
	sc, err := zklock.NewSchedule(s, inv.path, inv.opts.sched.every, inv.opts.scheduleOptions()...)
	if err != nil {
		return a.fail(err)
	}

	// Signals: forwarded to CMD while a tick runs (runChild reads them
	// from a.signals), and each ends the schedule.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	orig, relay := a.signals, make(chan os.Signal, 8)
	a.signals = relay
	defer func() { a.signals = orig }()
	var ticking atomic.Bool
	var wg sync.WaitGroup
	quit := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case sig := <-orig:
				cancel(&interrupted{sig}) // no tick starts from here on
				if ticking.Load() {
					select {
					case relay <- sig:
					default:
					}
				} else {
					a.log.Info("signal between ticks: stopping", "signal", signalName(sig), "path", inv.path)
				}
			case <-quit:
				return
			}
		}
	})
	defer func() { close(quit); wg.Wait() }()

	base := make([]string, 0, len(a.environ))
	for _, kv := range a.environ {
		if k, _, _ := strings.Cut(kv, "="); k != envTick && k != envTickMs {
			base = append(base, kv)
		}
	}
	defer func(env []string) { a.environ = env }(a.environ)
	last := exitOK
	err = sc.Run(ctx, func(_ context.Context, t zklock.Tick) error {
		ticking.Store(true)
		defer ticking.Store(false)
		a.environ = append(base[:len(base):len(base)],
			envTick+"="+t.Time.UTC().Format(time.RFC3339Nano), envTickMs+"="+strconv.FormatInt(t.Time.UnixMilli(), 10))
		a.mon.held(t.Hold)
		defer a.mon.held(nil)
		a.log.Info("tick", "path", inv.path, "tick", t.Time.UTC().Format(time.RFC3339Nano), "token", t.Token,
			"late", t.Late, "missed", t.Missed, "claim", printable(t.Node))
		// runChild ends CMD if the term is lost (the hold's Done).
		last = a.runChild(inv, a.command(inv), t.Hold)
		if last != exitOK {
			return tickError(last)
		}
		return nil
	})
	var sig *interrupted
	switch {
	case errors.As(err, &sig), errors.Is(err, context.Canceled):
		a.log.Info("schedule stopped", "path", inv.path, "exit_code", last)
		return last
	case err != nil:
		return a.outcome(exitCode(err), "%s: %v", inv.path, err)
	}
	return last
}
