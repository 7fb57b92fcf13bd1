package main

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/zklock/zklock"
)

// electRecipe is the elect verb's recipe: leadership is the hold of a
// zklock.LeaderElection at path (Curator's LeaderSelector protocol: the
// mutex's lock- nodes with the participant id as node data; --id, or this
// host's address when empty, as Curator). The acquisition checks that the
// node is owned by the current session before CMD starts (CURATOR-696).
func electRecipe(s *zklock.Session, path string, o *verbOpts) (acquireFunc, error) {
	e, err := zklock.NewLeaderElection(s, path, o.id)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, try bool) (*zklock.Hold, error) {
		if try {
			return e.TryCampaign(ctx)
		}
		return e.Campaign(ctx)
	}, nil
}

// runElect runs the elect verb. Without --requeue it is a holding verb like
// lock: campaign, run CMD while leader (or hold until a signal), release.
//
// With --requeue, once a term is over (CMD exited with any status, or
// leadership was lost and CMD was signalled) zklock campaigns again, on a
// fresh session, as Curator's autoRequeue does; each term's CMD gets that
// term's node and fencing token. It stops when a signal arrives (it is
// forwarded to CMD as usual), or when a campaign fails (--timeout, --try,
// errors), and exits with the status of the last round.
func runElect(a *app, inv *invocation) int {
	var led atomic.Bool // the round's campaign succeeded
	v := *inv.verb
	v.recipe = func(s *zklock.Session, path string, o *verbOpts) (acquireFunc, error) {
		acquire, err := electRecipe(s, path, o)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, try bool) (*zklock.Hold, error) {
			h, err := acquire(ctx, try)
			if err == nil {
				led.Store(true)
			}
			return h, err
		}, nil
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
