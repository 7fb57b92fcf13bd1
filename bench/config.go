package bench

import "time"

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

// DefaultConfig is what `make bench` runs: about seventeen minutes on a
// 2-core machine. Six short repetitions: the fewest for which benchmath
// gives a 95% interval of a median (with six, the slowest and the fastest
// repetition's ratio), and on a shared machine the noise comes in bursts,
// which many short repetitions ride out better than a few long ones. The
// failover phase takes about seven of the seventeen minutes (four before
// its cases at a 4 s session timeout).
func DefaultConfig() Config {
	return Config{
		Reps: 6, Warm: 200 * time.Millisecond, Uncontended: 600 * time.Millisecond,
		Contended: 1100 * time.Millisecond, Contenders: 8, Goroutines: 64,
		Herd: []int{10, 100, 1000}, AllocRuns: 200, Census: 500 * time.Millisecond, Held: 50000,
		RTTs:             []time.Duration{500 * time.Microsecond, 2 * time.Millisecond},
		PhaseUncontended: 500 * time.Millisecond, PhaseContended: 750 * time.Millisecond,
		Failover: FailoverConfig{Events: 30, SessionTimeout: time.Second,
			LossLimits: []string{"0", "default", "-1"}, Quiet: 150 * time.Millisecond,
			LongSession: 4 * time.Second, LongLossLimits: []string{"default"}},
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
	Version    string                           // its ZooKeeper release as it reports it ("3.9.6"; "" unknown)
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
	// Versions are standalone servers of different ZooKeeper releases,
	// the numerator of the ratios first, that zklock's mutex also runs on
	// (versions.go; fewer than two: no release comparison).
	Versions []VersionServer
}

// Delayer is a proxy with a per-direction delay (zktest.Proxy.SetDelay).
type Delayer struct {
	Addr     string
	SetDelay func(toServer, toClient time.Duration)
}
