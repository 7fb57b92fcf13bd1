package bench

import (
	"fmt"
	"time"
)

// lchain is one recipe's line of participants at one path: the leader and
// the next in line, each in a process of its own.
type lchain struct {
	v              variant
	path           string
	leader, waiter *fpart
}

// startChains makes, for each variant, a leader in a (its session on
// first[0] first) and a waiter queued behind it in b (on first[1] first).
func (r *failoverRun) startChains(vs []variant, a, b map[string]*leaderProc, dir string, first [2]int) ([]*lchain, error) {
	n := len(r.ens.Servers)
	var cs []*lchain
	from := r.log.len()
	var leaders []*fpart
	for _, v := range vs {
		c := &lchain{v: v, path: fmt.Sprintf("%s/%s-%s", dir, v.recipe, v.lossArg())}
		c.leader = r.join(a[v.lang], v, c.path, rest(n, first[0], first[1]))
		leaders = append(leaders, c.leader)
		cs = append(cs, c)
	}
	if err := r.waitEv(from, "start", 30*time.Second, leaders...); err != nil {
		return nil, err
	}
	var paths []string
	for _, c := range cs {
		c.waiter = r.join(b[c.v.lang], c.v, c.path, rest(n, first[1], first[0]))
		paths = append(paths, c.path)
	}
	return cs, r.waitQueued(2, paths...)
}

// closeChains closes every participant of cs.
func (r *failoverRun) closeChains(cs []*lchain) error {
	var ps []*fpart
	for _, c := range cs {
		ps = append(ps, c.leader, c.waiter)
	}
	return r.closeAll(ps)
}

// graceful: the leader leaves (Close, or the function returns) and the
// next in line, in another process on another follower, takes over. The
// recipes take turns event by event, so that slow phases of the machine
// spread over all of them.
func (r *failoverRun) graceful(vs []variant) error {
	began := time.Now()
	_, fs, err := r.members()
	if err != nil {
		return err
	}
	a, b, err := r.spawnPair(vs)
	if err != nil {
		return err
	}
	cs, err := r.startChains(vs, a, b, "/failover/graceful", [2]int{fs[0], fs[1]})
	if err != nil {
		return err
	}
	for i := -1; i < r.cfg.Events; i++ { // -1: a round not recorded, which warms the new ensemble up
		for _, c := range cs {
			from := r.log.len()
			t0 := mono()
			c.leader.proc.send("leave", c.leader.id)
			if err := r.waitEv(from, "start", 30*time.Second, c.waiter); err != nil {
				return err
			}
			if err := r.waitEv(from, "left", 30*time.Second, c.leader); err != nil {
				return err
			}
			evs, _ := r.log.since(from)
			if i >= 0 {
				r.record(caseGraceful, i, c, evs, t0, mono(), false, true)
			}
			// The one that left is replaced behind the new leader, in
			// its process and on its follower.
			old := c.leader
			c.leader = c.waiter
			c.waiter = r.join(old.proc, c.v, c.path, old.list)
			if err := r.waitQueued(2, c.path); err != nil {
				return err
			}
		}
	}
	r.say("failover graceful: %d handoffs of each of %d recipes in %v", r.cfg.Events, len(vs), time.Since(began).Round(time.Millisecond))
	return r.closeChains(cs)
}

// kill9: the leaders' processes are killed (SIGKILL); the next in line
// takes over when the servers expire the dead leader's session. A spare
// process of each language, started beforehand, queues the next waiter.
func (r *failoverRun) kill9(vs []variant) error {
	began := time.Now()
	_, fs, err := r.members()
	if err != nil {
		return err
	}
	lead, wait, err := r.spawnPair(vs)
	if err != nil {
		return err
	}
	spares := map[string]chan spawned{}
	spare := func(lang string) {
		ch := make(chan spawned, 1)
		spares[lang] = ch
		go func() {
			p, err := startLeaderProc(lang, r.bin, r.log)
			ch <- spawned{p, err}
		}()
	}
	langs := map[string]bool{}
	for _, v := range vs {
		if !langs[v.lang] {
			langs[v.lang] = true
			spare(v.lang)
		}
	}
	defer func() { // spares never used
		for _, ch := range spares {
			if s := <-ch; s.p != nil {
				s.p.stop()
			}
		}
	}()
	cs, err := r.startChains(vs, lead, wait, "/failover/kill9", [2]int{fs[0], fs[1]})
	if err != nil {
		return err
	}
	for i := range r.cfg.Events {
		time.Sleep(r.cfg.Quiet) // nothing in flight
		next := map[string]*leaderProc{}
		for lang := range langs {
			s := <-spares[lang]
			delete(spares, lang)
			if s.err != nil {
				return s.err
			}
			r.procs = append(r.procs, s.p)
			next[lang] = s.p
		}
		from := r.log.len()
		t0 := mono()
		for lang := range langs {
			_ = lead[lang].cmd.Process.Kill()
		}
		for lang := range langs {
			lead[lang].kill()
			spare(lang)
		}
		var waiters []*fpart
		for _, c := range cs {
			waiters = append(waiters, c.waiter)
		}
		if err := r.waitEv(from, "start", settleWait, waiters...); err != nil {
			return err
		}
		time.Sleep(r.cfg.Quiet) // a flap after the takeover counts too
		evs, _ := r.log.since(from)
		tEnd := mono()
		var paths []string
		for _, c := range cs {
			r.record(caseKill9, i, c, evs, t0, tEnd, true, true)
			dead := c.leader
			c.leader = c.waiter
			c.waiter = r.join(next[c.v.lang], c.v, c.path, dead.list)
			paths = append(paths, c.path)
		}
		if err := r.waitQueued(2, paths...); err != nil {
			return err
		}
		lead, wait = wait, next
	}
	r.say("failover kill9: %d kills of each of %d recipes' leader processes in %v", r.cfg.Events, len(vs), time.Since(began).Round(time.Millisecond))
	return r.closeChains(cs)
}

// spawned is a leader process started in the background.
type spawned struct {
	p   *leaderProc
	err error
}
