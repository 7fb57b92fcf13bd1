package bench

import (
	"fmt"
	"slices"
	"time"
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
