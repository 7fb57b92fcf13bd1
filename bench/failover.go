package bench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// FailoverConfig sizes the failover phase: how long a job has no leader
// when something happens to its leader.
type FailoverConfig struct {
	Events         int           // events per case; every recipe sees each (0: no failover phase)
	SessionTimeout time.Duration // of every leader's session
	// LossLimits are zklock's loss limits at follower-restart and
	// leader-kill, as the worker takes them: milliseconds, "default" (two
	// thirds of the session timeout) or negative (holds lost only when the
	// session expires). Graceful and kill9 run at the first.
	LossLimits []string
	Quiet      time.Duration // an event is over when no participant reported anything for this long
	// LongSession, if not 0, runs follower-restart and leader-kill again
	// at this session timeout, for zklock at LongLossLimits and Curator.
	LongSession    time.Duration
	LongLossLimits []string
}

// FaultEnsemble is the 3-member ensemble of the failover phase, with the
// controls it needs (zktest.Cluster's).
type FaultEnsemble struct {
	Servers    []string
	Tick       time.Duration
	Leader     func() (int, error)
	Stop       func(i int) error
	Start      func(i int) error
	Kill       func(i int) error
	FourLetter func(i int, cmd string) (string, error)
}

// Failover cases and recipes of the FAILOVER lines.
const (
	caseGraceful   = "graceful"
	caseKill9      = "kill9"
	caseFollower   = "follower-restart"
	caseLeaderKill = "leader-kill"

	recipeFloor           = "floor"
	recipeZKElection      = "zookeeper-election" // the ensemble itself: from the kill until it serves again
	recipeZklockElection  = "zklock-election"
	recipeZklockLatch     = "zklock-latch"
	recipeCuratorSelector = "curator-selector"
	recipeCuratorLatch    = "curator-latch"
)

// failoverCases in print order.
var failoverCases = []string{caseGraceful, caseKill9, caseFollower, caseLeaderKill}

// variant is one recipe at one setting in the failover phase.
type variant struct {
	recipe string // as printed
	lang   string // the leader process that runs it
	kind   string // the worker's recipe name
	loss   string // zklock's loss limit as the worker takes it; "" for the others
}

func zklockVariants(loss string) []variant {
	return []variant{{recipeZklockElection, langGo, "election", loss}, {recipeZklockLatch, langGo, "latch", loss}}
}

var curatorVariants = []variant{{recipeCuratorSelector, langJava, "selector", ""}, {recipeCuratorLatch, langJava, "latch", ""}}

// lossArg is what the worker is given for v's loss limit.
func (v variant) lossArg() string {
	if v.loss == "" {
		return "default"
	}
	return v.loss
}

// lossLabel names a loss limit for the FAILOVER lines: "0ms", "667ms"
// (the default, at a 1 s session timeout), "expiry" (negative: lost only
// when the session expires); "" for recipes without one.
func lossLabel(loss string, timeout time.Duration) string {
	switch {
	case loss == "":
		return ""
	case loss == "default":
		return fmt.Sprintf("%dms", (timeout * 2 / 3).Milliseconds())
	case strings.HasPrefix(loss, "-"):
		return "expiry"
	}
	return loss + "ms"
}

// fpart is one participant of the phase.
type fpart struct {
	id   string
	proc *leaderProc
	v    variant
	path string
	list []int // member indexes in the order its session tries them
}

// failoverRun is one failover phase in progress.
type failoverRun struct {
	cfg     FailoverConfig
	timeout time.Duration // the sessions' timeout now: cfg's SessionTimeout or LongSession
	ens     *FaultEnsemble
	log     *eventLog
	bin     string // the Go worker
	obs     *zk.Conn
	procs   []*leaderProc // every process started, for the cleanup
	next    int
	say     func(string, ...any)
	rep     *FailoverReport
}

// failover runs the failover phase against the ensemble ens.
func failover(cfg FailoverConfig, ens *FaultEnsemble, say func(string, ...any)) (*FailoverReport, error) {
	if !monoOK {
		return nil, errNoClock
	}
	began := time.Now()
	dir, err := os.MkdirTemp("", "zklock-bench-leaderworker-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin, err := leaderBinary(dir)
	if err != nil {
		return nil, err
	}
	obs, err := connectZKAll(ens.Servers, nil)
	if err != nil {
		return nil, err
	}
	defer obs.Close()
	r := &failoverRun{cfg: cfg, timeout: cfg.SessionTimeout, ens: ens, log: newEventLog(), bin: bin, obs: obs, say: say,
		rep: &FailoverReport{SessionTimeout: cfg.SessionTimeout, Tick: ens.Tick, LossLimits: cfg.LossLimits}}
	defer func() {
		for _, p := range r.procs {
			p.stop()
		}
	}()
	main := cfg.LossLimits[0]
	both := append(zklockVariants(main), curatorVariants...)
	graceful := append([]variant{{recipeFloor, langGo, "floor", ""}}, both...)
	if err := r.graceful(graceful); err != nil {
		return nil, err
	}
	if err := r.kill9(both); err != nil {
		return nil, err
	}
	var faulted []variant
	for _, l := range cfg.LossLimits {
		faulted = append(faulted, zklockVariants(l)...)
	}
	faulted = append(faulted, curatorVariants...)
	if err := r.faults(faulted); err != nil {
		return nil, err
	}
	if cfg.LongSession > 0 {
		r.timeout = cfg.LongSession
		var long []variant
		for _, l := range cfg.LongLossLimits {
			long = append(long, zklockVariants(l)...)
		}
		if err := r.faults(append(long, curatorVariants...)); err != nil {
			return nil, err
		}
	}
	r.rep.Elapsed = time.Since(began)
	return r.rep, nil
}

// faults runs follower-restart and leader-kill on vs.
func (r *failoverRun) faults(vs []variant) error {
	for _, c := range []string{caseFollower, caseLeaderKill} {
		if err := r.fault(c, vs); err != nil {
			return err
		}
	}
	return nil
}

// sessionLabel names the sessions' timeout for the FAILOVER lines: "" at
// the phase's own, else its duration ("4s").
func (r *failoverRun) sessionLabel() string {
	if r.timeout == r.cfg.SessionTimeout {
		return ""
	}
	return r.timeout.String()
}

// spawn starts a leader process of lang.
func (r *failoverRun) spawn(lang string) (*leaderProc, error) {
	p, err := startLeaderProc(lang, r.bin, r.log)
	if err == nil {
		r.procs = append(r.procs, p)
	}
	return p, err
}

// spawnPair starts a pair of leader processes of each language of vs.
func (r *failoverRun) spawnPair(vs []variant) (a, b map[string]*leaderProc, err error) {
	a, b = map[string]*leaderProc{}, map[string]*leaderProc{}
	for _, v := range vs {
		if a[v.lang] != nil {
			continue
		}
		if a[v.lang], err = r.spawn(v.lang); err != nil {
			return nil, nil, err
		}
		if b[v.lang], err = r.spawn(v.lang); err != nil {
			return nil, nil, err
		}
	}
	return a, b, nil
}

// join makes a participant of v at path in process p, its session trying
// the members of list in that order.
func (r *failoverRun) join(p *leaderProc, v variant, path string, list []int) *fpart {
	id := "p" + strconv.Itoa(r.next)
	r.next++
	servers := make([]string, len(list))
	for i, m := range list {
		servers[i] = r.ens.Servers[m]
	}
	p.send("join", id, v.kind, path, strings.Join(servers, ","), r.timeout.Milliseconds(), v.lossArg())
	return &fpart{id: id, proc: p, v: v, path: path, list: list}
}

// waitEv waits for event ev of every participant in ps, from log index from.
func (r *failoverRun) waitEv(from int, ev string, timeout time.Duration, ps ...*fpart) error {
	want := map[string]bool{}
	for _, p := range ps {
		want[p.id] = true
	}
	return r.log.wait(from, timeout, fmt.Sprintf("failover: %s of %d participants", ev, len(ps)), func(e fevent) bool {
		if e.Ev == ev && want[e.ID] {
			delete(want, e.ID)
		}
		return len(want) == 0
	})
}

// waitQueued waits until each path has n participants' nodes.
func (r *failoverRun) waitQueued(n int, paths ...string) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range paths {
		for {
			kids, _, err := r.obs.Children(p)
			if err == nil && len(kids) == n {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("bench: failover: %s has %d participants, want %d (%v)", p, len(kids), n, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// closeAll closes participants and waits until they are gone.
func (r *failoverRun) closeAll(ps []*fpart) error {
	from := r.log.len()
	for _, p := range ps {
		p.proc.send("close", p.id)
	}
	return r.waitEv(from, "closed", 30*time.Second, ps...)
}

// members returns the ensemble's leader and followers.
func (r *failoverRun) members() (leader int, followers []int, err error) {
	leader, err = r.ens.Leader()
	if err != nil {
		return 0, nil, err
	}
	for i := range r.ens.Servers {
		if i != leader {
			followers = append(followers, i)
		}
	}
	return leader, followers, nil
}

// rest is the members not in first, after first: a session's order.
func rest(n int, first ...int) []int {
	out := slices.Clone(first)
	for i := range n {
		if !slices.Contains(first, i) {
			out = append(out, i)
		}
	}
	return out
}

// settleWait is the longest an event may take to settle: several session
// timeouts and reconnects.
const settleWait = 8 * time.Second
