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
			r.record(kase, i, c, evs, t0, tEnd, false, settled && onTarget[c.leader.id])
		}
		if err := r.closeChains(cs); err != nil {
			return err
		}
	}
	r.say("failover %s: %d events, each on %d recipes, in %v", kase, r.cfg.Events, len(vs), time.Since(began).Round(time.Millisecond))
	return nil
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

// settle waits until the event is over (see fault) and reports whether it
// was within settleWait.
func (r *failoverRun) settle(from int, cs []*lchain) bool {
	ids := map[string]*lchain{}
	for _, c := range cs {
		ids[c.leader.id], ids[c.waiter.id] = c, c
	}
	before := map[*lchain]int{} // who led when the fault struck
	for _, c := range cs {
		if r.leadingBefore(from, c.leader.id) {
			before[c]++
		}
	}
	deadline := time.Now().Add(settleWait)
	var why string
	for time.Now().Before(deadline) {
		evs, _ := r.log.since(from)
		live := maps.Clone(before)
		down := map[string]bool{}
		var last int64
		for _, e := range evs {
			c, ok := ids[e.ID]
			if !ok {
				continue
			}
			last = max(last, e.T)
			switch e.Ev {
			case "start":
				live[c]++
			case "end":
				live[c]--
			case "conn":
				down[e.ID] = !connectedState(e.State)
			}
		}
		ok := mono()-last >= int64(r.cfg.Quiet)
		why = ""
		for _, c := range cs {
			if live[c] != 1 {
				ok = false
				why += fmt.Sprintf(" %s@%s has %d leaders;", c.v.recipe, c.v.loss, live[c])
			}
		}
		for id, d := range down {
			if d {
				ok = false
				why += " " + id + " disconnected;"
			}
		}
		if ok {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.say("failover: an event did not settle in %v:%s", settleWait, why)
	return false
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
