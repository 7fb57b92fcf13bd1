package main

import (
	"context"
	"errors"

	"github.com/zklock/zklock"
)

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
