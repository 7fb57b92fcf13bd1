package main

import (
	"context"
	"errors"
	"flag"
	"strconv"
	"time"

	"github.com/zklock/zklock"
)

// electVerb is `zklock elect PATH [CMD]`, and `elect --observe`.
var electVerb = &verb{name: "elect", args: "PATH [--id ID] [--requeue] [--latch] [--every DUR] [--] [CMD [ARG...]]",
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
		"zklock elect --every 5m --offset 30s --id \"$(hostname)\" reports -- ./report.sh"}

// electLossLimit is elect's default loss limit: leadership ends at the first
// suspension, as zklock.LeaderElection advises (a leader cut off from
// ZooKeeper cannot know whether another has been elected, and a leader's CMD
// usually acts on the world without fencing).
var electLossLimit = time.Duration(0)

// electRecipe is the elect verb's recipe: leadership is the hold of a
// zklock.LeaderElection at path (Curator's LeaderSelector protocol: the
// mutex's lock- nodes with the participant id as node data; --id, or this
// host's address when empty, as Curator). The acquisition checks that the
// node is owned by the current session before CMD starts (CURATOR-696).
func electRecipe(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
	if o.latch {
		return latchRecipe(s, path, o)
	}
	opts := o.aclOptions()
	if hc := o.health.check; hc != nil {
		opts = append(opts, zklock.WithHealthCheck(hc.Check, hc.Interval, hc.Failures))
	}
	e, err := zklock.NewLeaderElection(s, path, o.nodeData(), opts...)
	if err != nil {
		return nil, nil, err
	}
	return acquireWith(e.Campaign, e.TryCampaign), nil, nil
}

// latchRecipe is `elect --latch`: leadership is a term of a
// zklock.LeaderLatch at path (Curator's LeaderLatch protocol: nodes
// _c_<uuid>-latch-<seq>, the participant id as data; --id, or this host's
// address when empty, as for elect). The acquisition starts the latch and
// awaits its first term; the term's hold belongs to the latch, so the end
// is the latch's Close (releasing the hold would end the term and put the
// latch back in the queue). A latch has no single attempt: --try is refused
// before anything connects (checkElect).
func latchRecipe(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
	id := o.nodeData()
	if id == "" {
		// The default id of elect: the one a LeaderElection stores.
		e, err := zklock.NewLeaderElection(s, path, "")
		if err != nil {
			return nil, nil, err
		}
		id = e.ID()
	}
	l, err := zklock.NewLeaderLatch(s, path, id, o.aclOptions()...)
	if err != nil {
		return nil, nil, err
	}
	acquire := func(ctx context.Context, try bool) (*zklock.Hold, error) {
		if try {
			return nil, usagef("elect: --try is not available with --latch")
		}
		// The latch stays in the queue until Close (the end), not until
		// the acquisition's deadline.
		if err := l.Start(context.Background()); err != nil && !errors.Is(err, zklock.ErrRunning) {
			return nil, err
		}
		return l.Await(ctx)
	}
	return acquire, func(*zklock.Hold) error { return l.Close() }, nil
}

// checkElect refuses, before anything connects, the flags that do not go
// with --latch or --observe.
func checkElect(inv *invocation) error {
	o := &inv.opts
	observe := "--observe"
	if o.listenAlias {
		observe = "--listen"
	}
	switch {
	case o.listen && len(inv.cmd) > 0 && !o.hold.shSet:
		return usagef("elect %s: unexpected CMD %q (an observer only prints the leaders)", observe, inv.cmd[0])
	case o.listen && (o.id != "" || o.requeue || o.revocable || inv.cfg.try || o.acl != nil ||
		o.hold.data != "" || o.hold.shSet || o.hold.http != ""):
		return usagef("elect %s takes no --id, --requeue, --revocable, --acl, --try, --data, -c or --http (it does not take part)", observe)
	case o.json && !o.listen:
		return usagef("elect: --json goes with --observe")
	case o.latch && inv.cfg.try:
		return usagef("elect: --try is not available with --latch (a latch has no single attempt; use --timeout)")
	case o.latch && o.revocable:
		return usagef("elect: --revocable is not available with --latch (Curator's LeaderLatch is not revocable)")
	}
	return checkHealth(inv)
}

// runElect runs the elect verb. With --observe (formerly --listen) it only
// follows the leader (runListen). Otherwise it is a holding verb like lock:
// campaign (with --latch, as a Curator LeaderLatch participant), run CMD
// while leader (or hold until a signal), release; with --requeue, campaign
// again after each term (requeue.go).
func runElect(a *app, inv *invocation) int {
	if err := checkElect(inv); err != nil {
		return a.fail(err)
	}
	if err := checkSchedule(inv); err != nil {
		return a.fail(err)
	}
	if inv.opts.sched.every > 0 {
		return a.runSchedule(inv)
	}
	if inv.opts.listenAlias {
		a.log.Warn("elect --listen is deprecated: use elect --observe (same meaning)", "path", inv.path)
	}
	if inv.opts.listen {
		return a.runListen(inv)
	}
	inv.opts.health.check = a.healthCheck(inv)
	v := *inv.verb
	v.recipe = electRecipe
	round := *inv
	round.verb = &v
	return a.runHolding(&round)
}
