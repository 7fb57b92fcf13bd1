package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// Config sets the sizes of one suite run.
type Config struct {
	Reps        int           // repetitions of the timed measurements (medians are reported)
	Warm        time.Duration // uncontended warm-up per run
	Uncontended time.Duration // uncontended timed part per run
	Contended   time.Duration // contended run length
	Contenders  int           // sessions (one goroutine each) in the contended run
	Goroutines  int           // goroutines on one session in the in-process run
	Herd        []int         // waiter counts of the herd measurement
	AllocRuns   int           // acquire+release cycles averaged by AllocsPerCycle
	Census      time.Duration // length of the request-counting runs through the relay
	Held        int           // zklock mutexes held at once on one session (0: not measured)
	SkipCurator bool
	SkipKazoo   bool

	// The latency and ensemble phases: the main peers and the floors, each
	// workload through the delaying proxy at every round-trip time in RTTs
	// (0 means direct, and is measured with the other targets anyway) and
	// against the ensemble, with these run lengths.
	RTTs             []time.Duration
	PhaseUncontended time.Duration
	PhaseContended   time.Duration

	// Failover sizes the failover phase (Events 0: none).
	Failover FailoverConfig
}

// DefaultConfig is what `make bench` runs: about thirteen minutes on a
// 2-core machine. Six short repetitions: the fewest for which benchmath
// gives a 95% interval of a median (with six, the slowest and the fastest
// repetition's ratio), and on a shared machine the noise comes in bursts,
// which many short repetitions ride out better than a few long ones. The
// failover phase takes about four of the thirteen minutes.
func DefaultConfig() Config {
	return Config{
		Reps: 6, Warm: 200 * time.Millisecond, Uncontended: 600 * time.Millisecond,
		Contended: 1100 * time.Millisecond, Contenders: 8, Goroutines: 64,
		Herd: []int{10, 100, 1000}, AllocRuns: 200, Census: 500 * time.Millisecond, Held: 100000,
		RTTs:             []time.Duration{500 * time.Microsecond, 2 * time.Millisecond},
		PhaseUncontended: 500 * time.Millisecond, PhaseContended: 750 * time.Millisecond,
		Failover: FailoverConfig{Events: 30, SessionTimeout: time.Second,
			LossLimits: []string{"0", "default", "-1"}, Quiet: 150 * time.Millisecond},
	}
}

// FullConfig is what `make bench-full` runs: ten longer repetitions and 60
// events per failover case, about 25 minutes.
func FullConfig() Config {
	c := DefaultConfig()
	c.Reps, c.Uncontended, c.Contended, c.Census = 10, 800*time.Millisecond, 1500*time.Millisecond, time.Second
	c.PhaseUncontended, c.PhaseContended = 700*time.Millisecond, time.Second
	c.Failover.Events = 60
	return c
}

// Server is what a suite runs against: a standalone ZooKeeper server and,
// optionally, the same server behind a delaying proxy and an ensemble.
type Server struct {
	Addr       string                           // host:port
	FourLetter func(cmd string) (string, error) // a four-letter word (wchs, mntr)

	// Delayed is Addr through a proxy whose delay the suite sets for the
	// latency phases (nil: no latency phases).
	Delayed *Delayer
	// Ensemble holds the client addresses of a 3-member ensemble, followers
	// first (nil: no ensemble phase). Sessions are spread over them in
	// turn; single-session runs use the first.
	Ensemble []string
	// EnsembleFourLetter sends a four-letter word to Ensemble[i].
	EnsembleFourLetter func(i int, cmd string) (string, error)
	// Failover starts the failover phase's ensemble, whose members it
	// stops and kills (nil: no failover phase). It is called once, from
	// the goroutine that runs Suite, when the phase begins.
	Failover func() *FaultEnsemble
}

// Delayer is a proxy with a per-direction delay (zktest.Proxy.SetDelay).
type Delayer struct {
	Addr     string
	SetDelay func(toServer, toClient time.Duration)
}

// Setups of a Record.
const (
	Standalone = "standalone"
	Ensemble   = "ensemble"
)

// Target is one lock implementation under measurement.
type Target interface {
	Name() string
	Uncontended(server, path string, warm, dur time.Duration) (Run, error)
	// Contended spreads its sessions over servers in turn.
	Contended(servers []string, path string, sessions, workers int, dur time.Duration) (Run, error)
	clientPID() string // for /proc CPU accounting; "self" for this process
}

// herder is a Target that can queue waiters for the herd measurement.
type herder interface {
	HerdPrepare(server, path string, n int) error
	HerdGo() (time.Duration, error)
	HerdClose()
}

// Record is one raw measurement.
type Record struct {
	Target   string  `json:"target"`
	Measure  string  `json:"measure"` // uncontended, contended, goroutines, herd, allocs
	Setup    string  `json:"setup"`   // standalone or ensemble
	RTTms    float64 `json:"rtt_ms"`  // round trip added by the proxy
	Rep      int     `json:"rep"`
	Waiters  int     `json:"waiters,omitempty"`
	*Run     `json:"run,omitempty"`
	Requests map[string]int `json:"requests,omitempty"` // herd: by opcode

	RequestsPerHandoff      float64       `json:"requests_per_handoff,omitempty"`
	NotificationsPerHandoff float64       `json:"notifications_per_handoff,omitempty"`
	AllocsPerCycle          float64       `json:"allocs_per_cycle,omitempty"`
	HeapPerWaiter           float64       `json:"heap_bytes_per_waiter,omitempty"`       // herd: its first run at this size in the process
	HeapPerWaiterAgain      float64       `json:"heap_bytes_per_waiter_again,omitempty"` // herd: the same herd run again
	HeapPerHeld             float64       `json:"heap_bytes_per_held,omitempty"`         // held: Waiters locks held at once
	HeapPerMutex            float64       `json:"heap_bytes_per_mutex,omitempty"`        // held: each Mutex value, before it is locked
	GoroutinesPerHeld       float64       `json:"goroutines_per_held,omitempty"`         // held
	Census                  *CensusDetail `json:"census,omitempty"`                      // requests-uncontended, requests-contended
}

// Report is everything one suite run measured.
type Report struct {
	Started time.Time          `json:"started"`
	Elapsed time.Duration      `json:"elapsed_ns"`
	Config  Config             `json:"config"`
	Records []Record           `json:"records"`
	Ratios  map[string]float64 `json:"ratios"` // "<workload> zklock/<peer>": Intervals' X

	// Intervals holds each ratio with its 95% interval, by the same keys.
	Intervals map[string]Interval `json:"ratio_intervals,omitempty"`
	Mntr      string              `json:"mntr_after"`

	// Revision names the code measured (scripts/bench.sh: the commit, and
	// a digest of the uncommitted changes).
	Revision string `json:"revision,omitempty"`
	// Previous is the run before this one (scripts/bench.sh keeps it),
	// which the intervals' honesty goal is judged against.
	Previous *Previous `json:"previous,omitempty"`
	// Failover is the failover phase's outcome.
	Failover *FailoverReport `json:"failover,omitempty"`
}

// Previous is what the honesty goal needs of an earlier run.
type Previous struct {
	Started   time.Time           `json:"started"`
	Revision  string              `json:"revision"`
	Intervals map[string]Interval `json:"ratio_intervals"`
}

// Names of the targets the ratio lines compare.
const (
	ZklockMutex    = "zklock-mutex"
	CuratorMutex   = "curator-mutex"
	GoZKLock       = "go-zookeeper-lock"
	KazooLock      = "kazoo-lock"
	FloorCycle     = "floor-cycle"
	FloorPipelined = "floor-pipelined"
	FloorHandoff   = "floor-handoff"
	FloorListed    = "floor-listed"
	measureUnc     = "uncontended"
	measureCont    = "contended"
	measureGorout  = "goroutines"
	measureHerd    = "herd"
	measureAllocs  = "allocs"
	measureHeld    = "held"
	censusPrefix   = "requests-"
)

// phase is one setting the timed workloads run in.
type phase struct {
	setup    string
	rtt      time.Duration
	servers  []string // sessions spread over these in turn
	targets  []Target
	unc, con time.Duration
	apply    func() // sets the proxy's delay
}

func (ph phase) rttMS() float64 { return float64(ph.rtt) / float64(time.Millisecond) }

// maxChain bounds the handoff floors' chains.
const maxChain = 2000

// phaseTarget: the peers measured in every phase (the other recipes and
// floor-cycle+exists only directly on the standalone server).
func phaseTarget(name string) bool {
	switch name {
	case ZklockMutex, CuratorMutex, GoZKLock, KazooLock, FloorCycle, FloorPipelined:
		return true
	}
	return false
}

// phaseTargets are the targets of ts that phaseTarget names, in order.
func phaseTargets(ts []Target) []Target {
	var few []Target
	for _, t := range ts {
		if phaseTarget(t.Name()) {
			few = append(few, t)
		}
	}
	return few
}

// suite is one Suite run in progress: its settings, its targets and the
// report its steps fill in turn.
type suite struct {
	cfg       Config
	srv       Server
	log       io.Writer
	began     time.Time
	rep       *Report
	targets   []Target
	goTargets []*goTarget
	phases    []phase
	zkPID     string   // the standalone server's, for CPU accounting
	cleanup   []func() // run last first when the suite ends
}

// Suite runs every measurement against srv, one after another, logging
// progress to log, and returns the raw records.
func Suite(cfg Config, srv Server, log io.Writer) (*Report, error) {
	s := &suite{cfg: cfg, srv: srv, log: log, began: time.Now()}
	s.rep = &Report{Started: s.began.UTC(), Config: cfg}
	defer s.close()
	for _, step := range []func() error{
		s.startTargets, // the Go targets in this process, the Curator and kazoo drivers
		s.planPhases,   // direct, through the delaying proxy, against the ensemble
		s.warmUp,       // a round not recorded
		s.timedRuns,    // every repetition of every phase
		s.censusRuns,   // requests counted by relays
		s.herdRuns,     // a holder and N waiters on one session
		s.allocRuns,    // heap allocations per cycle (Go only)
		s.heldRun,      // many zklock mutexes held at once
		s.readMntr,     // the standalone server's mntr
		s.failoverPhase,
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	s.rep.Intervals = ratioIntervals(s.rep.Records)
	s.rep.Ratios = ratios(s.rep.Intervals)
	s.rep.Elapsed = time.Since(s.began)
	return s.rep, nil
}

// close runs the cleanups, the last registered first.
func (s *suite) close() {
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
}

// say logs one progress line, stamped with the seconds since the start.
func (s *suite) say(format string, args ...any) {
	_, _ = fmt.Fprintf(s.log, "%6.1fs "+format+"\n", append([]any{time.Since(s.began).Seconds()}, args...)...)
}

func (s *suite) add(recs ...Record) { s.rep.Records = append(s.rep.Records, recs...) }

// meter is a CPU meter of one timed run of phase ph whose client is the
// process client ("self" for this one).
func (s *suite) meter(ph phase, client string) *cpuMeter {
	m := &cpuMeter{client: client}
	if ph.setup == Standalone {
		m.server = s.zkPID
	}
	if ph.rtt > 0 && client == "self" {
		m.client = "" // the delaying proxy runs in this process too
	}
	return m
}

// startTargets makes the Go targets and starts the Curator and kazoo
// drivers (unless skipped).
func (s *suite) startTargets() error {
	for _, lib := range goLibs() {
		g := &goTarget{lib: lib, server: s.srv.Addr}
		s.goTargets = append(s.goTargets, g)
		s.targets = append(s.targets, g)
	}
	if !s.cfg.SkipCurator {
		p, err := startCurator(s.srv.Addr)
		if err != nil {
			return err
		}
		s.cleanup = append(s.cleanup, p.close)
		for _, r := range []string{"mutex", "rwwrite", "semmutex"} {
			s.targets = append(s.targets, &driver{name: "curator-" + r, recipe: r, proc: p})
		}
	}
	if !s.cfg.SkipKazoo {
		p, err := startKazoo(s.srv.Addr)
		if err != nil {
			return err
		}
		s.cleanup = append(s.cleanup, p.close)
		s.targets = append(s.targets, &driver{name: KazooLock, recipe: "lock", proc: p})
	}
	return nil
}

// noDelay takes the proxy's delay off.
func (s *suite) noDelay() {
	if s.srv.Delayed != nil {
		s.srv.Delayed.SetDelay(0, 0)
	}
}

// planPhases lists the settings of the timed runs: every target directly
// on the standalone server, then the phase targets through the proxy at
// each round trip and against the ensemble.
func (s *suite) planPhases() error {
	cfg, srv := s.cfg, s.srv
	s.zkPID = serverPID(srv.Addr)
	few := phaseTargets(s.targets)
	s.phases = []phase{{setup: Standalone, servers: []string{srv.Addr}, targets: s.targets,
		unc: cfg.Uncontended, con: cfg.Contended, apply: s.noDelay}}
	if srv.Delayed != nil {
		for _, rtt := range cfg.RTTs {
			if rtt <= 0 {
				continue
			}
			s.phases = append(s.phases, phase{setup: Standalone, rtt: rtt, servers: []string{srv.Delayed.Addr}, targets: few,
				unc: cfg.PhaseUncontended, con: cfg.PhaseContended,
				apply: func() { srv.Delayed.SetDelay(rtt/2, rtt-rtt/2) }})
		}
	}
	if len(srv.Ensemble) > 0 {
		s.phases = append(s.phases, phase{setup: Ensemble, servers: srv.Ensemble, targets: few,
			unc: cfg.PhaseUncontended, con: cfg.PhaseContended, apply: s.noDelay})
	}
	s.cleanup = append(s.cleanup, s.noDelay)
	return nil
}

// warmUp runs a round that is not recorded, so that the servers' JIT, the
// drivers' JVM and the caches are warm before the first target is measured.
func (s *suite) warmUp() error {
	cfg := s.cfg
	for _, ph := range s.phases {
		if ph.rtt > 0 {
			continue // the same server as the direct phase
		}
		for _, t := range ph.targets {
			if _, err := t.Uncontended(ph.servers[0], fmt.Sprintf("/bench/%s/warm-%s", t.Name(), ph.setup), 0, cfg.Warm); err != nil {
				return fmt.Errorf("%s warm-up: %w", t.Name(), err)
			}
			if !floor(t.Name()) {
				if _, err := t.Contended(ph.servers, fmt.Sprintf("/bench/%s/warmc-%s", t.Name(), ph.setup), cfg.Contenders, cfg.Contenders, cfg.Warm); err != nil {
					return fmt.Errorf("%s warm-up: %w", t.Name(), err)
				}
			}
		}
	}
	s.say("warm-up round done")
	return nil
}

// timedRuns runs every phase once per repetition, the phases interleaved.
func (s *suite) timedRuns() error {
	for i := 0; i < s.cfg.Reps; i++ {
		for _, ph := range s.phases {
			ph.apply()
			if err := s.runPhase(ph, i); err != nil {
				return err
			}
		}
	}
	s.noDelay()
	return nil
}

// censusRuns counts each target's requests through relays (census.go).
func (s *suite) censusRuns() error {
	if s.cfg.Census <= 0 {
		return nil
	}
	recs, err := census(s.cfg, s.srv, s.targets, s.say)
	if err != nil {
		return err
	}
	s.add(recs...)
	return nil
}

// herdRuns measures each herd target at each herd size, through an
// observer session that stays open until the suite ends.
func (s *suite) herdRuns() error {
	observer, err := connectZK(s.srv.Addr)
	if err != nil {
		return err
	}
	s.cleanup = append(s.cleanup, observer.Close)
	largestHerd := slices.Max(append([]int{0}, s.cfg.Herd...))
	for _, t := range s.targets {
		h, ok := t.(herder)
		if !ok || !herdTarget(t.Name()) {
			continue
		}
		for _, n := range s.cfg.Herd {
			if err := s.herdRun(observer, t.Name(), h, n, n == largestHerd); err != nil {
				return err
			}
		}
	}
	return nil
}

// herdRun is one herd of n waiters; a Go target's largest herd runs twice.
func (s *suite) herdRun(observer *zk.Conn, name string, h herder, n int, largest bool) error {
	r, err := herd(s.srv, observer, name, h, n)
	if err != nil {
		return fmt.Errorf("%s herd %d: %w", name, n, err)
	}
	if _, ok := h.(*goTarget); ok && largest {
		// Once more: the first herd of this size grows the
		// runtime's pools (goroutine records, sudogs, stack
		// spans), which it keeps and the next herd reuses.
		again, err := herd(s.srv, observer, name, h, n)
		if err != nil {
			return fmt.Errorf("%s herd %d again: %w", name, n, err)
		}
		r.HeapPerWaiterAgain = again.HeapPerWaiter
		s.say("herd %-22s %5d waiters: %.0f bytes of heap and stack per waiting goroutine, %.0f the second time", name, n, r.HeapPerWaiter, r.HeapPerWaiterAgain)
	}
	s.say("herd %-22s %5d waiters: %5.2f requests/handoff %5.2f notifications/handoff %v",
		name, n, r.RequestsPerHandoff, r.NotificationsPerHandoff, reqString(r.Requests))
	s.add(r)
	return nil
}

// allocRuns counts the heap allocations of an uncontended cycle of each
// Go target.
func (s *suite) allocRuns() error {
	for _, g := range s.goTargets {
		a, err := g.AllocsPerCycle(fmt.Sprintf("/bench/%s/allocs", g.Name()), s.cfg.AllocRuns)
		if err != nil {
			return fmt.Errorf("%s allocs: %w", g.Name(), err)
		}
		s.say("allocs %-22s %6.1f per acquire+release", g.Name(), a)
		s.add(Record{Target: g.Name(), Measure: measureAllocs, Setup: Standalone, AllocsPerCycle: a})
	}
	return nil
}

// heldRun holds cfg.Held zklock mutexes at once on one session (held.go).
func (s *suite) heldRun() error {
	n := s.cfg.Held
	if n <= 0 {
		return nil
	}
	r, err := heldLocks(s.srv.Addr, "/bench/held", n)
	if err != nil {
		return fmt.Errorf("%d held locks: %w", n, err)
	}
	s.say("held %d zklock mutexes on one session in %v: %.0f bytes and %.4f goroutines per held lock (and %.0f bytes per Mutex value)",
		n, r.Elapsed.Round(time.Millisecond), r.HeapPerHeld, r.GoroutinesPerHeld, r.HeapPerMutex)
	s.add(r)
	return nil
}

// readMntr keeps the standalone server's mntr output after the runs.
func (s *suite) readMntr() error {
	if s.srv.FourLetter != nil {
		s.rep.Mntr, _ = s.srv.FourLetter("mntr")
	}
	return nil
}

// failoverPhase runs the failover phase (failover.go) on its own ensemble.
func (s *suite) failoverPhase() error {
	fc := s.cfg.Failover
	if fc.Events <= 0 || s.srv.Failover == nil {
		return nil
	}
	s.say("failover phase: %d events per case, session timeout %v", fc.Events, fc.SessionTimeout)
	f, err := failover(fc, s.srv.Failover(), s.say)
	if err != nil {
		return err
	}
	s.rep.Failover = f
	return nil
}

// phaseRep is repetition i of one phase.
type phaseRep struct {
	phase
	i     int
	tag   string   // "<setup>-<rtt>ms", in the log and the node paths
	order []Target // the phase's targets, from another one each repetition
}

// runPhase runs repetition i of every timed workload of one phase: each
// target uncontended, the two handoff floors, then each lock contended
// across sessions and in one process.
func (s *suite) runPhase(ph phase, i int) error {
	// Each repetition starts at another target, so that no target is
	// always the one measured right after a phase change.
	k := i * len(ph.targets) / max(1, s.cfg.Reps)
	pr := phaseRep{phase: ph, i: i, tag: fmt.Sprintf("%s-%gms", ph.setup, ph.rttMS()),
		order: append(slices.Clone(ph.targets[k:]), ph.targets[:k]...)}
	for _, run := range []func(phaseRep) error{s.uncontendedRuns, s.handoffFloors, s.contendedRuns} {
		if err := run(pr); err != nil {
			return err
		}
	}
	return nil
}

// addRun records one timed run of repetition pr.
func (s *suite) addRun(pr phaseRep, target, measure string, r Run) {
	s.add(Record{Target: target, Measure: measure, Setup: pr.setup, RTTms: pr.rttMS(), Rep: pr.i, Run: &r})
}

// uncontendedRuns: each target's acquire+release cycles on one session.
func (s *suite) uncontendedRuns(pr phaseRep) error {
	i, tag := pr.i, pr.tag
	for _, t := range pr.order {
		m := s.meter(pr.phase, t.clientPID())
		m.start()
		r, err := t.Uncontended(pr.servers[0], fmt.Sprintf("/bench/%s/u%d-%s", t.Name(), i, tag), s.cfg.Warm, pr.unc)
		m.stop(&r)
		if err != nil {
			return fmt.Errorf("%s uncontended %s: %w", t.Name(), tag, err)
		}
		s.say("rep %d %-14s %-22s uncontended %8.0f cycles/s p50 %v p99 %v", i, tag, t.Name(), r.PerSec, r.P50, r.P99)
		s.addRun(pr, t.Name(), measureUnc, r)
	}
	return nil
}

// handoffFloors: chains about as long as the contended runs, at most
// maxChain nodes (each made before the clock starts).
func (s *suite) handoffFloors(pr phaseRep) error {
	i, tag := pr.i, pr.tag
	for _, f := range []struct {
		name string
		run  func(servers []string, dir string, n int) (Run, error)
		cost time.Duration // about one handoff's time
	}{{FloorHandoff, floorHandoff, 500*time.Microsecond + pr.rtt}, {FloorListed, floorListed, time.Millisecond + 2*pr.rtt}} {
		n := min(maxChain, max(20, int(pr.con/f.cost)))
		m := s.meter(pr.phase, "self")
		m.start()
		r, err := f.run(pr.servers, fmt.Sprintf("/bench/%s/c%d-%s", f.name, i, tag), n)
		m.stop(&r)
		if err != nil {
			return fmt.Errorf("%s %s: %w", f.name, tag, err)
		}
		s.say("rep %d %-14s %-22s handoffs   %8.0f /s p50 %v p99 %v", i, tag, f.name, r.PerSec, r.P50, r.P99)
		s.addRun(pr, f.name, measureCont, r)
	}
	return nil
}

// contendedRuns: each lock contended across sessions, then by goroutines
// on one session.
func (s *suite) contendedRuns(pr phaseRep) error {
	i, tag := pr.i, pr.tag
	for _, mode := range []struct {
		measure           string
		sessions, workers int
	}{{measureCont, s.cfg.Contenders, s.cfg.Contenders}, {measureGorout, 1, s.cfg.Goroutines}} {
		for _, t := range pr.order {
			if floor(t.Name()) {
				continue
			}
			m := s.meter(pr.phase, t.clientPID())
			m.start()
			r, err := t.Contended(pr.servers, fmt.Sprintf("/bench/%s/%s%d-%s", t.Name(), mode.measure, i, tag), mode.sessions, mode.workers, pr.con)
			m.stop(&r)
			if err != nil {
				return fmt.Errorf("%s %s %s: %w", t.Name(), mode.measure, tag, err)
			}
			s.say("rep %d %-14s %-22s %-11s %8.0f handoffs/s wait p50 %v p99 %v", i, tag, t.Name(), mode.measure, r.PerSec, r.P50, r.P99)
			s.addRun(pr, t.Name(), mode.measure, r)
		}
	}
	return nil
}

// goLibs are the Go implementations measured in this process.
func goLibs() []goLib {
	return append([]goLib{zklockMutex}, append(extraZklock, goZKLock, floorCycle, floorCycleExists, floorPipelined)...)
}

// extraZklock holds the zklock recipes besides Mutex (see recipes.go).
var extraZklock []goLib

// herdTarget: the recipes whose nodes are direct children of the lock path
// (a semaphore mutex keeps them in locks/ and leases/ below it).
func herdTarget(name string) bool {
	return !floor(name) && !strings.HasSuffix(name, "-semmutex")
}

// floor reports whether a target is a floor (measured uncontended only, or
// the handoff chain).
func floor(name string) bool { return strings.HasPrefix(name, "floor-") }

func opName(op int32) string {
	names := map[int32]string{1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData",
		8: "getChildren", 12: "getChildren2", 14: "multi", 15: "create2", 19: "createContainer",
		9: "sync", 101: "setWatches", 17: "checkWatches", 18: "removeWatches", 106: "addWatch"}
	if s, ok := names[op]; ok {
		return s
	}
	return "op" + strconv.Itoa(int(op))
}

func reqString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// cellOf selects the records of one setting.
type cellOf struct {
	setup string
	rtt   float64
}

var direct = cellOf{Standalone, 0}

// medianOf is the median over reps of f applied to the runs of one target
// and measure in setting c; ok is false if there are none.
func medianOf(recs []Record, c cellOf, target, measure string, f func(*Run) float64) (float64, bool) {
	var xs []float64
	for _, r := range recs {
		if r.Target == target && r.Measure == measure && r.Run != nil && r.Setup == c.setup && r.RTTms == c.rtt {
			xs = append(xs, f(r.Run))
		}
	}
	return median(xs), len(xs) > 0
}

func perSec(r *Run) float64 { return r.PerSec }

// workloadName is the name of a measure in a setting in the ratio lines:
// uncontended, contended (sessions), inprocess (goroutines on one
// session), with -rtt<N>ms for a delayed proxy and ensemble- for the
// ensemble.
func workloadName(c cellOf, measure string) string {
	w := measure
	if measure == measureGorout {
		w = "inprocess"
	}
	if c.setup == Ensemble {
		w = "ensemble-" + w
	}
	if c.rtt > 0 {
		w += fmt.Sprintf("-rtt%gms", c.rtt)
	}
	return w
}

// A peer of a ratio line: zklock's mutex against target in measure.
type peer struct{ name, target string }

// peersOf lists the ratio lines' peers of a measure, in print order.
func peersOf(measure string) []peer {
	locks := []peer{{"curator", CuratorMutex}, {"gozk", GoZKLock}, {"kazoo", KazooLock}}
	switch measure {
	case measureUnc:
		return append(locks, peer{"floor", FloorCycle}, peer{"pipelined-floor", FloorPipelined})
	case measureCont:
		return append(locks, peer{"floor", FloorHandoff}, peer{"listed-floor", FloorListed})
	case measureGorout:
		return append(locks, peer{"floor", FloorHandoff})
	}
	return nil
}

// floorMeasure: floors are measured once per setting; the bare handoff
// floor stands for both contended workloads.
func floorMeasure(target, measure string) string {
	if target == FloorHandoff || target == FloorListed {
		return measureCont
	}
	return measure
}

// ratioLine is one RATIO line's key and how to compute it.
type ratioLine struct {
	key      string // "<workload> zklock/<peer>"
	cell     cellOf
	measure  string
	workload string
	peer     peer
}

// ratioLines lists every ratio line the records allow, in print order.
func ratioLines(recs []Record) []ratioLine {
	var cells []cellOf
	for _, r := range recs {
		c := cellOf{r.Setup, r.RTTms}
		if r.Run != nil && !slices.Contains(cells, c) {
			cells = append(cells, c)
		}
	}
	slices.SortStableFunc(cells, func(a, b cellOf) int {
		if a.setup != b.setup {
			return strings.Compare(b.setup, a.setup) // standalone first
		}
		return cmpFloat(a.rtt, b.rtt)
	})
	var out []ratioLine
	for _, c := range cells {
		for _, m := range []string{measureUnc, measureCont, measureGorout} {
			w := workloadName(c, m)
			for _, p := range peersOf(m) {
				out = append(out, ratioLine{key: w + " zklock/" + p.name, cell: c, measure: m, workload: w, peer: p})
			}
		}
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// perRep is f of the runs of one target and measure in setting c, by
// repetition.
func perRep(recs []Record, c cellOf, target, measure string, f func(*Run) float64) map[int]float64 {
	out := map[int]float64{}
	for _, r := range recs {
		if r.Target == target && r.Measure == measure && r.Run != nil && r.Setup == c.setup && r.RTTms == c.rtt {
			out[r.Rep] = f(r.Run)
		}
	}
	return out
}

// ratioIntervals are the RATIO lines' figures: per line, the median of the
// per-repetition throughput ratios with its 95% interval (see Interval).
func ratioIntervals(recs []Record) map[string]Interval {
	out := map[string]Interval{}
	for _, l := range ratioLines(recs) {
		a := perRep(recs, l.cell, ZklockMutex, l.measure, perSec)
		b := perRep(recs, l.cell, l.peer.target, floorMeasure(l.peer.target, l.measure), perSec)
		if xs := pairedRatios(a, b); len(xs) > 0 {
			out[l.key] = medianInterval(xs)
		}
	}
	return out
}

// ratios are the RATIO lines' central figures (Interval.X).
func ratios(ivs map[string]Interval) map[string]float64 {
	out := make(map[string]float64, len(ivs))
	for k, iv := range ivs {
		out[k] = iv.X
	}
	return out
}
