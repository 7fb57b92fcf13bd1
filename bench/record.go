package bench

import "time"

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
	// ZooKeeper is the release of the suite's servers, as they report it
	// ("3.9.6"); Curator and Kazoo the peers' releases ("" not run).
	ZooKeeper string `json:"zookeeper,omitempty"`
	Curator   string `json:"curator,omitempty"`
	Kazoo     string `json:"kazoo,omitempty"`

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
	// Versions is the release comparison (nil: not run).
	Versions *VersionReport `json:"versions,omitempty"`
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
