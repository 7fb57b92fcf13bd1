package bench

import (
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// The crowd phase (-bench.phase crowd, run by make bench after the suite):
// a leader latch with many candidates, one session each, against the same
// latch with a few, for zklock's LeaderLatch (bench/leaderworker) and
// Curator's (java/CuratorFailover.java) in the same run, on one standalone
// server. Each candidate's session goes through a counting relay. For each
// recipe and size it times the next leader's start after a kill -9 of the
// leader's process (a process of its own, holding only that session: the
// server expires it after the session timeout) and after a graceful
// resignation (the leader leaves the latch), and counts the requests every
// session sent and the server's CPU in each handover's window, less the
// quiet rate (pings) measured just before it.

// CrowdConfig sizes the crowd phase.
type CrowdConfig struct {
	Sizes          []int         // candidates; the first is the baseline (3), the last the crowd (1000)
	Kills          int           // kill -9 handovers per recipe and size
	Graceful       int           // graceful handovers per recipe and size
	SessionTimeout time.Duration // the candidates' sessions
	Settle         time.Duration // a handover's window ends this long after the new leader's start
}

// DefaultCrowd is make bench's crowd: 3 and 1,000 candidates, 3 kills and
// 6 resignations each.
func DefaultCrowd() CrowdConfig {
	return CrowdConfig{Sizes: []int{3, 1000}, Kills: 3, Graceful: 6, SessionTimeout: 4 * time.Second, Settle: 300 * time.Millisecond}
}

// crowdRecipes are the recipes the crowd runs.
var crowdRecipes = []variant{{recipeZklockLatch, langGo, "latch", "default"}, {recipeCuratorLatch, langJava, "latch", ""}}

// CrowdSample is one handover.
type CrowdSample struct {
	Recipe   string  `json:"recipe"`
	Size     int     `json:"size"`
	Case     string  `json:"case"` // graceful, kill9
	Ms       float64 `json:"handover_ms"`
	Requests float64 `json:"requests"`   // every session's, from the act to Settle after the start (pings excluded)
	CPUms    float64 `json:"server_cpu"` // the server's CPU in the window less the quiet rate's, ms
}

// crowdRun is one recipe at one size.
type crowdRun struct {
	cfg   CrowdConfig
	bin   string
	log   *eventLog
	relay *relay
	obs   *zk.Conn
	spid  string
	procs []*leaderProc
	say   func(string, ...any)
	next  int
}

// Crowd runs the crowd phase against the standalone server addr (pid spid,
// "" if unknown: no CPU figures) and writes its lines to out.
func Crowd(cfg CrowdConfig, addr, spid string, out io.Writer) ([]CrowdSample, error) {
	if !monoOK {
		return nil, errNoClock
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	dir, err := os.MkdirTemp("", "zklock-bench-crowd-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin, err := leaderBinary(dir)
	if err != nil {
		return nil, err
	}
	obs, err := connectZKAll([]string{addr}, nil)
	if err != nil {
		return nil, err
	}
	defer obs.Close()
	var all []CrowdSample
	for _, size := range cfg.Sizes {
		for _, v := range crowdRecipes {
			rl, err := newRelay(addr)
			if err != nil {
				return nil, err
			}
			r := &crowdRun{cfg: cfg, bin: bin, log: newEventLog(), relay: rl, obs: obs, spid: spid, say: say}
			began := time.Now()
			ss, err := r.run(v, size, fmt.Sprintf("/bench/crowd/%s-%d", v.recipe, size))
			r.close()
			rl.Close()
			if err != nil {
				return nil, fmt.Errorf("crowd %s %d: %w", v.recipe, size, err)
			}
			say("crowd %-14s %5d candidates: %d handovers in %v", v.recipe, size, len(ss), time.Since(began).Round(time.Millisecond))
			all = append(all, ss...)
		}
	}
	printCrowd(out, cfg, all)
	return all, nil
}

func (r *crowdRun) close() {
	for _, p := range r.procs {
		p.stop()
	}
}

func (r *crowdRun) spawn(lang string) (*leaderProc, error) {
	p, err := startLeaderProc(lang, r.bin, r.log)
	if err == nil {
		r.procs = append(r.procs, p)
	}
	return p, err
}

func (r *crowdRun) join(p *leaderProc, v variant, path string) string {
	id := "c" + strconv.Itoa(r.next)
	r.next++
	p.send("join", id, v.kind, path, r.relay.Addr(), r.cfg.SessionTimeout.Milliseconds(), v.lossArg())
	return id
}

// queued waits until path has n candidates' nodes.
func (r *crowdRun) queued(path string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		kids, _, err := r.obs.Children(path)
		if err == nil && len(kids) == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: crowd: %s has %d candidates, want %d (%v)", path, len(kids), n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run queues the killable leaders first (a process each), then the rest in
// one process, and makes the handovers.
func (r *crowdRun) run(v variant, size int, path string) ([]CrowdSample, error) {
	kills := min(r.cfg.Kills, size)
	var killable []*leaderProc
	for i := range kills {
		p, err := r.spawn(v.lang)
		if err != nil {
			return nil, err
		}
		r.join(p, v, path)
		if err := r.queued(path, i+1); err != nil {
			return nil, err
		}
		killable = append(killable, p)
	}
	bulk, err := r.spawn(v.lang)
	if err != nil {
		return nil, err
	}
	for range size - kills {
		r.join(bulk, v, path)
	}
	if err := r.queued(path, size); err != nil {
		return nil, err
	}
	// After each handover a new candidate joins at the back, so that every
	// handover has size candidates.
	var out []CrowdSample
	for _, p := range killable {
		s, err := r.handover(func() { p.kill() }, r.cfg.SessionTimeout*3)
		if err != nil {
			return nil, err
		}
		s.Recipe, s.Size, s.Case = v.recipe, size, caseKill9
		out = append(out, s)
		r.join(bulk, v, path)
		if err := r.queued(path, size); err != nil {
			return nil, err
		}
	}
	leader, err := r.leaderID(0)
	if err != nil {
		return nil, err
	}
	for range r.cfg.Graceful {
		from := r.log.len()
		id := leader
		s, err := r.handover(func() { bulk.send("leave", id) }, 30*time.Second)
		if err != nil {
			return nil, err
		}
		s.Recipe, s.Size, s.Case = v.recipe, size, caseGraceful
		out = append(out, s)
		if leader, err = r.leaderID(from); err != nil {
			return nil, err
		}
		r.join(bulk, v, path)
		if err := r.queued(path, size); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// leaderID is the candidate of the latest start event since from.
func (r *crowdRun) leaderID(from int) (string, error) {
	evs, _ := r.log.since(from)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Ev == "start" {
			return evs[i].ID, nil
		}
	}
	return "", fmt.Errorf("bench: crowd: no leader started")
}

// handover measures one: a quiet second for the rates, then act, then the
// next start and the window after it. The requests are counted from the
// act (the rejoin before it has settled: queued, then the quiet second).
func (r *crowdRun) handover(act func(), timeout time.Duration) (CrowdSample, error) {
	q0, c0 := mono(), cpuMillis(r.spid)
	time.Sleep(time.Second)
	q1, c1 := mono(), cpuMillis(r.spid)
	quietCPU := (c1 - c0) / float64(q1-q0) // ms per ns
	r.relay.Reset()
	from := r.log.len()
	t0, cpu0 := mono(), cpuMillis(r.spid)
	act()
	var start int64
	if err := r.log.wait(from, timeout, "crowd: the next leader", func(e fevent) bool {
		if e.Ev == "start" {
			start = e.T
			return true
		}
		return false
	}); err != nil {
		return CrowdSample{}, err
	}
	time.Sleep(r.cfg.Settle)
	_, reqs, _ := r.relay.Counts()
	t1, cpu1 := mono(), cpuMillis(r.spid)
	s := CrowdSample{Ms: float64(start-t0) / 1e6, Requests: float64(reqs), CPUms: math.NaN()}
	if r.spid != "" && c0 >= 0 && cpu1 >= 0 {
		s.CPUms = (cpu1 - cpu0) - quietCPU*float64(t1-t0)
	}
	return s, nil
}

// printCrowd prints the crowd's table, a CROWD line per recipe, case and
// size, a RATIO line per recipe and case (the crowd's median against the
// baseline's, with the bootstrap interval of the ratio of medians), and
// the O(1) check: the crowd's requests per handover within 10% of the
// baseline's.
func printCrowd(w io.Writer, cfg CrowdConfig, ss []CrowdSample) {
	base, big := cfg.Sizes[0], cfg.Sizes[len(cfg.Sizes)-1]
	pick := func(recipe, c string, size int, f func(CrowdSample) float64) []float64 {
		var xs []float64
		for _, s := range ss {
			if s.Recipe == recipe && s.Case == c && s.Size == size && !math.IsNaN(f(s)) {
				xs = append(xs, f(s))
			}
		}
		slices.Sort(xs)
		return xs
	}
	ms := func(s CrowdSample) float64 { return s.Ms }
	reqs := func(s CrowdSample) float64 { return s.Requests }
	cpu := func(s CrowdSample) float64 { return s.CPUms }
	ratio := func(a, b []float64) float64 { return median(a) / median(b) }
	fmt.Fprintf(w, "\nLeader latch with many candidates (one session each; session timeout %v; medians)\n", cfg.SessionTimeout)
	fmt.Fprintf(w, "%-14s %-9s %6s %4s %12s %14s %16s\n", "recipe", "case", "size", "n", "handover ms", "requests/hand", "server CPU ms/h")
	for _, v := range crowdRecipes {
		for _, c := range []string{caseKill9, caseGraceful} {
			for _, size := range cfg.Sizes {
				t := pick(v.recipe, c, size, ms)
				fmt.Fprintf(w, "%-14s %-9s %6d %4d %12.1f %14.1f %16.1f\n", v.recipe, c, size, len(t), median(t),
					median(pick(v.recipe, c, size, reqs)), median(pick(v.recipe, c, size, cpu)))
			}
		}
	}
	var checks []string
	for _, v := range crowdRecipes {
		for _, c := range []string{caseKill9, caseGraceful} {
			for _, size := range cfg.Sizes {
				fmt.Fprintf(w, "CROWD %s %s size=%d handover_ms=%.1f requests=%.1f server_cpu_ms=%.1f n=%d\n", v.recipe, c, size,
					median(pick(v.recipe, c, size, ms)), median(pick(v.recipe, c, size, reqs)), median(pick(v.recipe, c, size, cpu)),
					len(pick(v.recipe, c, size, ms)))
			}
			for _, m := range []struct {
				name string
				f    func(CrowdSample) float64
			}{{"handover", ms}, {"requests", reqs}, {"server-cpu", cpu}} {
				a, b := pick(v.recipe, c, big, m.f), pick(v.recipe, c, base, m.f)
				iv := bootstrap(a, b, ratio)
				fmt.Fprintf(w, "RATIO crowd-%s-%s %s %d/%d %.2f [%s, %s]\n", c, m.name, v.recipe, big, base, iv.X, crowdBound(iv.Lo), crowdBound(iv.Hi))
			}
			rb, rc := median(pick(v.recipe, c, base, reqs)), median(pick(v.recipe, c, big, reqs))
			verdict := "ok"
			if math.Abs(rc-rb) > 0.1*rb {
				verdict = "FAIL"
			}
			checks = append(checks, fmt.Sprintf("CHECK crowd requests/handover O(1) %s %s: %d candidates %.1f vs %d candidates %.1f (within 10%%): %s",
				v.recipe, c, big, rc, base, rb, verdict))
		}
	}
	fmt.Fprintln(w, strings.Join(checks, "\n"))
}

// crowdBound prints an interval's end ("-" when unbounded: too few values).
func crowdBound(x float64) string {
	if unbounded(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}
