package bench

import (
	"cmp"
	"slices"
	"time"
)

// Run is the outcome of one timed measurement: Ops completed operations
// (acquire+release cycles, or acquisitions under contention) in Elapsed,
// with one latency per operation (cycle time, or acquire wait).
type Run struct {
	Ops     int             `json:"ops"`
	Elapsed time.Duration   `json:"elapsed_ns"`
	Lat     []time.Duration `json:"-"`
	P50     time.Duration   `json:"p50_ns"`
	P99     time.Duration   `json:"p99_ns"`
	PerSec  float64         `json:"per_sec"`

	// CPU milliseconds per operation of the ZooKeeper server and of the
	// client process (this one for Go, the driver for Curator and kazoo);
	// 0 when unknown.
	ServerCPU float64 `json:"server_cpu_ms_per_op,omitempty"`
	ClientCPU float64 `json:"client_cpu_ms_per_op,omitempty"`
}

// finish fills the derived fields of r.
func (r *Run) finish() {
	if r.Elapsed > 0 {
		r.PerSec = float64(r.Ops) / r.Elapsed.Seconds()
	}
	r.P50, r.P99 = percentile(r.Lat, 50), percentile(r.Lat, 99)
}

// percentile is the nearest-rank percentile p (0..100) of xs (latencies,
// or the failover phase's gaps in ms), 0 if empty.
func percentile[T cmp.Ordered](xs []T, p float64) (zero T) {
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// median of xs (the mean of the middle two for an even count), 0 if empty.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
