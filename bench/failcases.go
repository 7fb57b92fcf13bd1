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

// openChains starts, for each variant, a leader in a process of a on the
// first follower and a waiter in a process of b on the second, below dir.
func (r *failoverRun) openChains(vs []variant, dir string) (a, b map[string]*leaderProc, cs []*lchain, err error) {
	_, fs, err := r.members()
	if err != nil {
		return nil, nil, nil, err
	}
	if a, b, err = r.spawnPair(vs); err != nil {
		return nil, nil, nil, err
	}
	cs, err = r.startChains(vs, a, b, dir, [2]int{fs[0], fs[1]})
	return a, b, cs, err
}

// graceful: the leader leaves (Close, or the function returns) and the
// next in line, in another process on another follower, takes over. The
// recipes take turns event by event, so that slow phases of the machine
// spread over all of them.
func (r *failoverRun) graceful(vs []variant) error {
	began := time.Now()
	_, _, cs, err := r.openChains(vs, "/failover/graceful")
	if err != nil {
		return err
	}
	for i := -1; i < r.cfg.Events; i++ { // -1: a round not recorded, which warms the new ensemble up
		for _, c := range cs {
			if err := r.leave(i, c); err != nil {
				return err
			}
		}
	}
	r.say("failover graceful: %d handoffs of each of %d recipes in %v", r.cfg.Events, len(vs), time.Since(began).Round(time.Millisecond))
	return r.closeChains(cs)
}

// leave is graceful event i of chain c (i < 0: not recorded).
func (r *failoverRun) leave(i int, c *lchain) error {
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
	return r.waitQueued(2, c.path)
}

// kill9: the leaders' processes are killed (SIGKILL); the next in line
// takes over when the servers expire the dead leader's session. A spare
// process of each language, started beforehand, queues the next waiter.
func (r *failoverRun) kill9(vs []variant) error {
	began := time.Now()
	sp := r.startSpares(vs)
	defer sp.stop()
	lead, wait, cs, err := r.openChains(vs, "/failover/kill9")
	if err != nil {
		return err
	}
	for i := range r.cfg.Events {
		time.Sleep(r.cfg.Quiet) // nothing in flight
		next, err := sp.take()
		if err != nil {
			return err
		}
		if err := r.kill9Event(i, cs, lead, next, sp); err != nil {
			return err
		}
		lead, wait = wait, next
	}
	r.say("failover kill9: %d kills of each of %d recipes' leader processes in %v", r.cfg.Events, len(vs), time.Since(began).Round(time.Millisecond))
	return r.closeChains(cs)
}

// kill9Event is kill9's event i: the leaders' processes lead are killed
// (and spares started in their stead), the waiters take over, and new
// waiters queue in the processes next.
func (r *failoverRun) kill9Event(i int, cs []*lchain, lead, next map[string]*leaderProc, sp *spares) error {
	from := r.log.len()
	t0 := mono()
	for lang := range lead {
		_ = lead[lang].cmd.Process.Kill()
	}
	for lang := range lead {
		lead[lang].kill()
		sp.start(lang)
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
	return r.waitQueued(2, paths...)
}

// spawned is a leader process started in the background.
type spawned struct {
	p   *leaderProc
	err error
}

// spares are leader processes started in the background, one of each
// language at a time, for the next kill9 event.
type spares struct {
	r  *failoverRun
	ch map[string]chan spawned
}

// startSpares starts a spare of each language of vs.
func (r *failoverRun) startSpares(vs []variant) *spares {
	sp := &spares{r: r, ch: map[string]chan spawned{}}
	for _, v := range vs {
		if sp.ch[v.lang] == nil {
			sp.start(v.lang)
		}
	}
	return sp
}

// start starts a spare of lang.
func (sp *spares) start(lang string) {
	ch := make(chan spawned, 1)
	sp.ch[lang] = ch
	go func() {
		p, err := startLeaderProc(lang, sp.r.bin, sp.r.log)
		ch <- spawned{p, err}
	}()
}

// take waits for the spare of each language and hands them over, by
// language, to the run's cleanup.
func (sp *spares) take() (map[string]*leaderProc, error) {
	next := map[string]*leaderProc{}
	for lang, ch := range sp.ch {
		s := <-ch
		delete(sp.ch, lang)
		if s.err != nil {
			return nil, s.err
		}
		sp.r.procs = append(sp.r.procs, s.p)
		next[lang] = s.p
	}
	return next, nil
}

// stop stops the spares never taken.
func (sp *spares) stop() {
	for _, ch := range sp.ch {
		if s := <-ch; s.p != nil {
			s.p.stop()
		}
	}
}
