package main

import (
	"context"
	"errors"
	"os"
	"sync/atomic"

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
	e, err := zklock.NewLeaderElection(s, path, o.id, o.aclOptions()...)
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
	id := o.id
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
// with --latch or --listen.
func checkElect(inv *invocation) error {
	o := &inv.opts
	switch {
	case o.listen && len(inv.cmd) > 0:
		return usagef("elect --listen: unexpected CMD %q (a listener only prints the leaders)", inv.cmd[0])
	case o.listen && (o.id != "" || o.requeue || o.revocable || inv.cfg.try || o.acl != nil):
		return usagef("elect --listen takes no --id, --requeue, --revocable, --acl or --try (it does not take part)")
	case o.json && !o.listen:
		return usagef("elect: --json goes with --listen")
	case o.latch && inv.cfg.try:
		return usagef("elect: --try is not available with --latch (a latch has no single attempt; use --timeout)")
	case o.latch && o.revocable:
		return usagef("elect: --revocable is not available with --latch (Curator's LeaderLatch is not revocable)")
	}
	return nil
}

// runElect runs the elect verb. With --listen it only follows the leader
// (runListen). Otherwise, without --requeue, it is a holding verb like lock:
// campaign (with --latch, as a Curator LeaderLatch participant), run CMD
// while leader (or hold until a signal), release.
//
// With --requeue, once a term is over (CMD exited with any status, or
// leadership was lost and CMD was signalled) zklock campaigns again, on a
// fresh session, as Curator's autoRequeue does; each term's CMD gets that
// term's node and fencing token. It stops when a signal arrives (it is
// forwarded to CMD as usual), or when a campaign fails (--timeout, --try,
// errors), and exits with the status of the last round.
func runElect(a *app, inv *invocation) int {
	if err := checkElect(inv); err != nil {
		return a.fail(err)
	}
	if inv.opts.listen {
		return a.runListen(inv)
	}
	var led atomic.Bool // the round's campaign succeeded
	v := *inv.verb
	v.recipe = func(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
		acquire, end, err := electRecipe(s, path, o)
		if err != nil {
			return nil, nil, err
		}
		return func(ctx context.Context, try bool) (*zklock.Hold, error) {
			h, err := acquire(ctx, try)
			if err == nil {
				led.Store(true)
			}
			return h, err
		}, end, nil
	}
	round := *inv
	round.verb = &v
	if !inv.opts.requeue {
		return a.runHolding(&round)
	}

	// Signals are noted on their way to the rounds: one ends the requeueing.
	var signalled atomic.Bool
	sigs := make(chan os.Signal, 8)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case sig := <-a.signals:
				signalled.Store(true)
				select {
				case sigs <- sig:
				default:
				}
			case <-quit:
				return
			}
		}
	}()
	defer func() {
		close(quit)
		<-done
	}()
	b := *a
	b.signals = sigs
	for {
		led.Store(false)
		code := b.runHolding(&round)
		if !led.Load() || signalled.Load() {
			return code
		}
		a.log.Info("zklock: term over; campaigning again (--requeue)", "path", inv.path, "status", code)
	}
}
