package bench

import (
	"fmt"
	"maps"
	"strings"
	"time"
)

// fault runs the server-side cases, each event on fresh participants: for
// every variant a leader whose session is on the member the fault hits
// and a waiter on another member, then
//
//   - follower-restart: that member, a follower, is stopped (SIGTERM) and
//     started again; the leader's connection moves to the next member of
//     its list;
//   - leader-kill: that member, the ZooKeeper leader, is killed (SIGKILL)
//     and started again; every connection drops while the others elect.
//
// The event is over once the member serves again, every variant has one
// leader, every session is connected and nothing was reported for Quiet.
func (r *failoverRun) fault(kase string, vs []variant) error {
	began := time.Now()
	a, b, err := r.spawnPair(vs)
	if err != nil {
		return err
	}
	for i := range r.cfg.Events {
		leader, fs, err := r.members()
		if err != nil {
			return err
		}
		target, other := fs[i%2], fs[1-i%2]
		if kase == caseLeaderKill {
			target = leader
		}
		// A member that has just rejoined may turn a session away; the
		// event is set up again until every leader's session is on target.
		var cs []*lchain
		var onTarget map[string]bool
		for attempt := 0; ; attempt++ {
			if cs, err = r.startChains(vs, a, b, fmt.Sprintf("/failover/%s/%d-%d", kase, i, attempt), [2]int{target, other}); err != nil {
				return err
			}
			onTarget = r.sessionsOn(target)
			placed := true
			for _, c := range cs {
				placed = placed && onTarget[c.leader.id]
			}
			if placed || attempt == 2 {
				break
			}
			if err := r.closeChains(cs); err != nil {
				return err
			}
			time.Sleep(r.cfg.Quiet)
		}
		time.Sleep(r.cfg.Quiet)
		from := r.log.len()
		t0 := mono()
		var serving <-chan int64
		if kase == caseLeaderKill {
			serving = r.servingAgain(target)
		}
		switch kase {
		case caseFollower:
			err = r.ens.Stop(target)
		default:
			err = r.ens.Kill(target)
		}
		if err == nil {
			err = r.ens.Start(target)
		}
		if err != nil {
			return fmt.Errorf("bench: failover %s: member %d: %w", kase, target, err)
		}
		settled := r.settle(from, cs)
		evs, _ := r.log.since(from)
		tEnd := mono()
		for _, c := range cs {
			r.record(kase, i, c, evs, t0, tEnd, false, onTarget[c.leader.id])
			if !settled[c] {
				r.rep.Events[len(r.rep.Events)-1].Unsettled = true
			}
		}
		if serving != nil {
			at := <-serving
			e := FailoverEvent{Case: kase, Recipe: recipeZKElection, Session: r.sessionLabel(), Event: i,
				GapMs: ms64(at - t0), MovedMs: -1, SilentMs: -1, BackMs: -1, Valid: true, Unsettled: at < 0}
			if at < 0 {
				e.GapMs = ms64(tEnd - t0)
			}
			r.rep.Events = append(r.rep.Events, e)
		}
		if err := r.closeChains(cs); err != nil {
			return err
		}
	}
	r.say("failover %s: %d events, each on %d recipes, in %v", kase, r.cfg.Events, len(vs), time.Since(began).Round(time.Millisecond))
	return nil
}

// servingAgain watches the ensemble after its leader, member killed, is
// killed: it sends on the channel when (mono) a new leader and a member
// answering are first seen, that is a member other than killed whose
// `srvr` says "Mode: leader" (a leader answers it only once it serves; a
// follower may still say "Mode: follower" for a while after the kill), or
// -1 if none is within settleWait.
func (r *failoverRun) servingAgain(killed int) <-chan int64 {
	out := make(chan int64, 1)
	go func() {
		deadline := time.Now().Add(settleWait)
		for time.Now().Before(deadline) {
			for m := range r.ens.Servers {
				if m == killed {
					continue
				}
				at := mono()
				if srvr, err := r.ens.FourLetter(m, "srvr"); err == nil && strings.Contains(srvr, "Mode: leader") {
					out <- at // the answer was given no earlier than asked
					return
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		out <- -1
	}()
	return out
}

// sessionsOn reports which participants' sessions member m serves (its
// `cons`), by participant id.
func (r *failoverRun) sessionsOn(m int) map[string]bool {
	out := map[string]bool{}
	cons, err := r.ens.FourLetter(m, "cons")
	if err != nil {
		return out
	}
	evs, _ := r.log.since(0)
	for _, e := range evs {
		if e.Ev == "session" && e.Sid != "" && strings.Contains(cons, "sid="+strings.ToLower(e.Sid)+",") {
			out[e.ID] = true
		}
	}
	return out
}

// settle waits until the event is over for every chain (see fault), at
// most settleWait, and reports which chains it was over for. A chain that
// never settles is recorded anyway: its time without a leader then runs to
// the event's end.
func (r *failoverRun) settle(from int, cs []*lchain) map[*lchain]bool {
	ids := map[string]*lchain{}
	for _, c := range cs {
		ids[c.leader.id], ids[c.waiter.id] = c, c
	}
	before := map[string]bool{} // who led when the fault struck
	for _, c := range cs {
		before[c.leader.id] = r.leadingBefore(from, c.leader.id)
	}
	deadline := time.Now().Add(settleWait)
	for {
		evs, _ := r.log.since(from)
		live := maps.Clone(before) // who leads, by participant
		down := map[string]bool{}
		last := map[*lchain]int64{}
		for _, e := range evs {
			c, ok := ids[e.ID]
			if !ok {
				continue
			}
			last[c] = max(last[c], e.T)
			switch e.Ev {
			case "start":
				live[e.ID] = true
			case "end":
				live[e.ID] = false
			case "conn":
				down[e.ID] = !connectedState(e.State)
			}
		}
		now := mono()
		settled := map[*lchain]bool{}
		all := true
		for _, c := range cs {
			leaders := 0
			for _, p := range []*fpart{c.leader, c.waiter} {
				if live[p.id] {
					leaders++
				}
			}
			settled[c] = leaders == 1 && !down[c.leader.id] && !down[c.waiter.id] && now-last[c] >= int64(r.cfg.Quiet)
			all = all && settled[c]
		}
		if all || time.Now().After(deadline) {
			if !all {
				var why []string
				for _, c := range cs {
					if !settled[c] {
						why = append(why, fmt.Sprintf("%s loss=%s", c.v.recipe, dash(c.v.loss)))
					}
				}
				r.say("failover: an event did not settle in %v for %s", settleWait, strings.Join(why, ", "))
			}
			return settled
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// leadingBefore reports whether participant id's last term event before
// log index from is a start.
func (r *failoverRun) leadingBefore(from int, id string) bool {
	evs, _ := r.log.since(0)
	on := false
	for _, e := range evs[:from] {
		if e.ID == id {
			switch e.Ev {
			case "start":
				on = true
			case "end":
				on = false
			}
		}
	}
	return on
}

// connectedState: a conn event's state (zklock's or Curator's) that means
// the session is connected.
func connectedState(s string) bool {
	switch s {
	case "connected", "CONNECTED", "RECONNECTED", "READ_ONLY":
		return true
	}
	return false
}
