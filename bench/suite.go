package bench

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock/internal/peers"
)

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
	s.rep = &Report{Started: s.began.UTC(), Config: cfg, ZooKeeper: srv.Version}
	defer s.close()
	for _, step := range []func() error{
		s.announce,     // the releases, first (versions.go)
		s.startTargets, // the Go targets in this process, the Curator and kazoo drivers
		s.planPhases,   // direct, through the delaying proxy, against the ensemble
		s.warmUp,       // a round not recorded
		s.releases,     // the release comparison's servers (versions.go)
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
	s.rep.addVersionRatios() // and Ratios
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
		s.rep.Curator = peers.Newest().CuratorVersion
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
		s.rep.Kazoo = p.version
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
		if err := s.versionRuns(i); err != nil {
			return err
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

// FailoverOnly runs the failover phase alone (srv needs only Failover).
func FailoverOnly(cfg Config, srv Server, log io.Writer) (*Report, error) {
	s := &suite{cfg: cfg, srv: srv, log: log, began: time.Now()}
	s.rep = &Report{Started: s.began.UTC(), Config: cfg}
	defer s.close()
	if err := s.failoverPhase(); err != nil {
		return nil, err
	}
	s.rep.Elapsed = time.Since(s.began)
	return s.rep, nil
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
