package main

import (
	"context"
	"time"

	"github.com/zklock/zklock"
)

// requeueBackoff spaces out the campaigns of elect --requeue: after a term,
// zklock waits between half and all of Ceiling(n) (n counts the terms since
// the last long one), so a CMD that fails at once runs at most 6 times in
// 10 s (after 0, 0.25, 0.75, 1.75, 3.75 and 7.75 s at the soonest) instead
// of as often as ZooKeeper answers, and never waits more than 30 s.
var requeueBackoff = zklock.Backoff{Base: 500 * time.Millisecond, Max: 30 * time.Second}

// requeueStable is how long a term must last for the next campaign to
// start without a backoff (the backoff starts over): the backoff's Max.
var requeueStable = requeueBackoff.Max

// requeueDelay is the wait before campaign attempt+1: in [c/2, c] for c the
// backoff's Ceiling(attempt) (the library's full jitter, halved, on top of
// half the ceiling, so that a crash loop is bounded from below).
func requeueDelay(attempt int) time.Duration {
	c := requeueBackoff.Ceiling(attempt)
	return c/2 + requeueBackoff.Delay(attempt, nil)/2
}

// requeue is elect --requeue (or --health-cmd) after its first term t: while terms are led
// and not ended by a signal, it waits (requeueDelay; no wait after a term
// of requeueStable or more) and campaigns again on the same session s,
// which the library keeps (or, after an expiry, renews) for as long as
// zklock runs: a crash loop neither hammers the ensemble nor opens a
// session per term. Each term's CMD gets that term's node and token. A
// signal during the wait, or a campaign that fails (--timeout, --try,
// errors), ends it; zklock exits with the last term's status.
func (a *app) requeue(inv *invocation, s *zklock.Session, t termEnd) termEnd {
	attempt := 0
	for t.led && !t.signalled && (inv.opts.requeue || t.unhealthy) {
		if t.held >= requeueStable {
			attempt = 0
		}
		wait := requeueDelay(attempt)
		if hc := inv.opts.health.check; t.unhealthy && hc != nil {
			wait = max(wait, hc.Interval) // the cool-off
		}
		attempt++
		a.log.Info("term over; campaigning again (--requeue)", "path", inv.path, "status", t.code,
			"held", t.held.Round(time.Millisecond), "after", wait.Round(time.Millisecond), "session", sessionHex(s.ID()))
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case sig := <-a.signals:
			timer.Stop()
			a.log.Info("signal between terms: stopping", "signal", signalName(sig), "path", inv.path, "exit_code", t.code)
			return t
		}
		ictx, stop := a.interruptible(context.Background())
		ctx, cancel := ictx, context.CancelFunc(func() {})
		if inv.cfg.timeout > 0 {
			ctx, cancel = context.WithTimeout(ictx, inv.cfg.timeout)
		}
		a.mon.retry()
		t = a.term(inv, s, ictx, ctx, stop)
		cancel()
		stop()
	}
	return t
}
