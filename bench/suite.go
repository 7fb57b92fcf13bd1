package bench

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config sets the sizes of one suite run.
type Config struct {
	Reps        int           // repetitions of the timed measurements (medians are reported)
	Warm        time.Duration // uncontended warm-up per run
	Uncontended time.Duration // uncontended timed part per run
	Contended   time.Duration // contended run length
	Contenders  int           // sessions (one goroutine each) in the contended run
	Goroutines  int           // goroutines on one session in the second contended run
	Herd        []int         // waiter counts of the herd measurement
	AllocRuns   int           // acquire+release cycles averaged by AllocsPerCycle
	Census      time.Duration // length of the request-counting runs through the relay
	SkipCurator bool
	SkipKazoo   bool
}

// DefaultConfig is what `make bench` runs: about six minutes on a 2-core
// machine.
func DefaultConfig() Config {
	return Config{
		Reps: 3, Warm: 500 * time.Millisecond, Uncontended: 2 * time.Second,
		Contended: 4 * time.Second, Contenders: 8, Goroutines: 64,
		Herd: []int{10, 100, 1000}, AllocRuns: 200, Census: time.Second,
	}
}

// Server is the ZooKeeper server a suite runs against.
type Server struct {
	Addr       string                           // host:port
	FourLetter func(cmd string) (string, error) // a four-letter word (wchs, mntr)
}

// Target is one lock implementation under measurement.
type Target interface {
	Name() string
	Uncontended(server, path string, warm, dur time.Duration) (Run, error)
	Contended(server, path string, sessions, workers int, dur time.Duration) (Run, error)
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
	Target   string `json:"target"`
	Measure  string `json:"measure"` // uncontended, contended, goroutines, herd, allocs
	Rep      int    `json:"rep"`
	Waiters  int    `json:"waiters,omitempty"`
	*Run     `json:"run,omitempty"`
	Requests map[string]int `json:"requests,omitempty"` // herd: by opcode

	RequestsPerHandoff      float64 `json:"requests_per_handoff,omitempty"`
	NotificationsPerHandoff float64 `json:"notifications_per_handoff,omitempty"`
	AllocsPerCycle          float64 `json:"allocs_per_cycle,omitempty"`
	HeapPerWaiter           float64 `json:"heap_bytes_per_waiter,omitempty"`
}

// Report is everything one suite run measured.
type Report struct {
	Started time.Time          `json:"started"`
	Config  Config             `json:"config"`
	Records []Record           `json:"records"`
	Ratios  map[string]float64 `json:"ratios"`
	Mntr    string             `json:"mntr_after"`
}

// Names of the targets the ratio lines compare.
const (
	ZklockMutex   = "zklock-mutex"
	CuratorMutex  = "curator-mutex"
	FloorCycle    = "floor-cycle"
	FloorHandoff  = "floor-handoff"
	measureUnc    = "uncontended"
	measureCont   = "contended"
	measureGorout = "goroutines"
	measureHerd   = "herd"
	measureAllocs = "allocs"
	censusPrefix  = "requests-"
)

// Suite runs every measurement against srv, one after another, logging
// progress to log, and returns the raw records.
func Suite(cfg Config, srv Server, log io.Writer) (*Report, error) {
	rep := &Report{Started: time.Now().UTC(), Config: cfg}
	var targets []Target
	var goTargets []*goTarget
	for _, lib := range goLibs() {
		g := &goTarget{lib: lib, server: srv.Addr}
		goTargets = append(goTargets, g)
		targets = append(targets, g)
	}
	if !cfg.SkipCurator {
		p, err := startCurator(srv.Addr)
		if err != nil {
			return nil, err
		}
		defer p.close()
		for _, r := range []string{"mutex", "rwwrite", "semmutex"} {
			targets = append(targets, &driver{name: "curator-" + r, recipe: r, proc: p})
		}
	}
	if !cfg.SkipKazoo {
		p, err := startKazoo(srv.Addr)
		if err != nil {
			return nil, err
		}
		defer p.close()
		targets = append(targets, &driver{name: "kazoo-lock", recipe: "lock", proc: p})
	}
	add := func(r Record) { rep.Records = append(rep.Records, r) }
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(log, format+"\n", args...) }
	zkPID := serverPID(srv.Addr)
	meter := func(t string) *cpuMeter { return &cpuMeter{server: zkPID, client: t} }

	// A round that is not recorded, so that the server's JIT, the drivers'
	// JVM and the caches are warm before the first target is measured.
	for _, t := range targets {
		if _, err := t.Uncontended(srv.Addr, fmt.Sprintf("/bench/%s/warm", t.Name()), 0, cfg.Warm); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", t.Name(), err)
		}
		if !floor(t.Name()) {
			if _, err := t.Contended(srv.Addr, fmt.Sprintf("/bench/%s/warmc", t.Name()), cfg.Contenders, cfg.Contenders, cfg.Warm); err != nil {
				return nil, fmt.Errorf("%s warm-up: %w", t.Name(), err)
			}
		}
	}
	say("warm-up round done")

	for i := 0; i < cfg.Reps; i++ {
		// Each repetition starts at another target, so that no target is
		// always the one measured right after a phase change.
		k := i * len(targets) / cfg.Reps
		order := append(slices.Clone(targets[k:]), targets[:k]...)
		for _, t := range order {
			m := meter(t.clientPID())
			m.start()
			r, err := t.Uncontended(srv.Addr, fmt.Sprintf("/bench/%s/u%d", t.Name(), i), cfg.Warm, cfg.Uncontended)
			m.stop(&r)
			if err != nil {
				return nil, fmt.Errorf("%s uncontended: %w", t.Name(), err)
			}
			say("rep %d %-22s uncontended %8.0f cycles/s p50 %v p99 %v", i, t.Name(), r.PerSec, r.P50, r.P99)
			add(Record{Target: t.Name(), Measure: measureUnc, Rep: i, Run: &r})
		}
		// The handoff floor: a chain about as long as the contended runs.
		n := max(20, int(cfg.Contended.Seconds()*500))
		m := meter("self")
		m.start()
		r, err := floorHandoff(srv.Addr, fmt.Sprintf("/bench/%s/c%d", FloorHandoff, i), n)
		m.stop(&r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", FloorHandoff, err)
		}
		say("rep %d %-22s handoffs   %8.0f /s p50 %v p99 %v", i, FloorHandoff, r.PerSec, r.P50, r.P99)
		add(Record{Target: FloorHandoff, Measure: measureCont, Rep: i, Run: &r})
		for _, mode := range []struct {
			measure           string
			sessions, workers int
		}{{measureCont, cfg.Contenders, cfg.Contenders}, {measureGorout, 1, cfg.Goroutines}} {
			for _, t := range order {
				if floor(t.Name()) {
					continue
				}
				m := meter(t.clientPID())
				m.start()
				r, err := t.Contended(srv.Addr, fmt.Sprintf("/bench/%s/%s%d", t.Name(), mode.measure, i), mode.sessions, mode.workers, cfg.Contended)
				m.stop(&r)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", t.Name(), mode.measure, err)
				}
				say("rep %d %-22s %-11s %8.0f handoffs/s wait p50 %v p99 %v", i, t.Name(), mode.measure, r.PerSec, r.P50, r.P99)
				add(Record{Target: t.Name(), Measure: mode.measure, Rep: i, Run: &r})
			}
		}
	}

	if cfg.Census > 0 {
		recs, err := census(cfg, srv, targets, say)
		if err != nil {
			return nil, err
		}
		rep.Records = append(rep.Records, recs...)
	}

	observer, err := connectZK(srv.Addr)
	if err != nil {
		return nil, err
	}
	defer observer.Close()
	for _, t := range targets {
		h, ok := t.(herder)
		if !ok || !herdTarget(t.Name()) {
			continue
		}
		for _, n := range cfg.Herd {
			r, err := herd(srv, observer, t.Name(), h, n)
			if err != nil {
				return nil, fmt.Errorf("%s herd %d: %w", t.Name(), n, err)
			}
			say("herd %-22s %5d waiters: %5.2f requests/handoff %5.2f notifications/handoff %v",
				t.Name(), n, r.RequestsPerHandoff, r.NotificationsPerHandoff, reqString(r.Requests))
			add(r)
		}
	}
	for _, g := range goTargets {
		a, err := g.AllocsPerCycle(fmt.Sprintf("/bench/%s/allocs", g.Name()), cfg.AllocRuns)
		if err != nil {
			return nil, fmt.Errorf("%s allocs: %w", g.Name(), err)
		}
		say("allocs %-22s %6.1f per acquire+release", g.Name(), a)
		add(Record{Target: g.Name(), Measure: measureAllocs, AllocsPerCycle: a})
	}
	if srv.FourLetter != nil {
		rep.Mntr, _ = srv.FourLetter("mntr")
	}
	rep.Ratios = ratios(rep.Records)
	return rep, nil
}

// goLibs are the Go implementations measured in this process.
func goLibs() []goLib {
	return append([]goLib{zklockMutex}, append(extraZklock, goZKLock, floorCycle, floorCycleExists)...)
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

// medianOf is the median over reps of f applied to the runs of one target
// and measure; ok is false if there are none.
func medianOf(recs []Record, target, measure string, f func(*Run) float64) (float64, bool) {
	var xs []float64
	for _, r := range recs {
		if r.Target == target && r.Measure == measure && r.Run != nil {
			xs = append(xs, f(r.Run))
		}
	}
	return median(xs), len(xs) > 0
}

func perSec(r *Run) float64 { return r.PerSec }

// ratios are the four closing lines' numbers: ratios of median throughputs.
func ratios(recs []Record) map[string]float64 {
	out := map[string]float64{}
	for _, c := range closing {
		a, okA := medianOf(recs, ZklockMutex, c.measure, perSec)
		b, okB := medianOf(recs, c.other, c.measure, perSec)
		if okA && okB && b > 0 {
			out[c.line] = a / b
		}
	}
	return out
}

var closing = []struct{ line, measure, other string }{
	{"uncontended zklock/curator", measureUnc, CuratorMutex},
	{"uncontended zklock/floor", measureUnc, FloorCycle},
	{"contended zklock/curator", measureCont, CuratorMutex},
	{"contended zklock/floor", measureCont, FloorHandoff},
}

var errNoRatios = errors.New("bench: a ratio could not be computed")
