// Package zklockprom exports zklock's lock and session events as Prometheus
// metrics. It is built on zklock.WithObserver and lives in its own module,
// so that the zklock library does not depend on the Prometheus client.
//
//	m := zklockprom.New()
//	prometheus.MustRegister(m)
//	sess, err := zklock.Connect(servers, m.SessionOption())
//
// The metrics (names prefixed with the namespace, "zklock" by default).
// These names, labels and label values are a contract: `zklock elect` and
// `zklock lock` serve the same on /metrics, and they change only by
// extension.
//
//	zklock_acquire_wait_seconds   histogram by recipe: how long each acquisition waited
//	zklock_hold_seconds           histogram by recipe: how long each hold lasted, to its release or loss
//	zklock_acquisitions_total     counter by recipe: locks acquired (re-entries are not counted)
//	zklock_releases_total         counter by recipe: holds released (revoked and resigned ones too)
//	zklock_losses_total           counter by cause and recipe: holds lost (expired, suspended,
//	                              node_gone, closed, other) and leaderships ended by another's
//	                              revocation (revoked) or by Resign (resigned)
//	zklock_acquire_failures_total counter by reason: locked, timeout, canceled, expired,
//	                              closed, unreachable, other (acquires that ended without a hold)
//	zklock_acquire_retries_total  counter by recipe: acquires a recipe started again by itself
//	                              after a failure (an election's WithRequeue, a latch)
//	zklock_held                   gauge by recipe: holds held now (each acquisition once)
//	zklock_waiting                gauge: acquires under way now
//	zklock_leader                 gauge by path and recipe: 1 while this process leads the
//	                              election or latch at path (the series stays, at 0, after)
//	zklock_sessions               gauge by state: sessions now connecting, connected,
//	                              suspended or expired (a closed session leaves the gauge)
//	zklock_session_state_changes_total counter by state: the sessions' state changes, by the
//	                              state entered (a suspension between two scrapes shows here)
//
// The recipe label is one of zklock's Recipe constants: mutex, rwlock,
// semaphore, election, latch ("" for a hand-made event without one).
// zklock_leader's path label is bounded by the elections a process takes
// part in. With WithPathLabel the histograms, counters and the held and
// waiting gauges also carry the lock path; use it only when the set of
// paths is small and fixed. No metric has a per-node or per-session label.
//
// Alert on, for example: no leader anywhere (sum by (path) (zklock_leader)
// == 0 for a minute), any rate of zklock_losses_total{cause!~"resigned|revoked"},
// zklock_sessions{state="suspended"} > 0 or a rising
// zklock_session_state_changes_total{state="suspended"}, a high rate of
// zklock_acquire_retries_total.
package zklockprom

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/metrics"
)

// Loss causes, the values of the cause label of zklock_losses_total.
const (
	CauseExpired   = metrics.CauseExpired   // the session expired (zklock.ErrSessionExpired)
	CauseSuspended = metrics.CauseSuspended // suspended past the loss limit (zklock.ErrSuspended)
	CauseNodeGone  = metrics.CauseNodeGone  // the node vanished or changed owner (zklock.ErrNodeGone)
	CauseClosed    = metrics.CauseClosed    // the session was closed while holding (zklock.ErrClosed)
	CauseRevoked   = metrics.CauseRevoked   // released because revocation was asked (Event.Cause zklock.ErrRevoked)
	CauseResigned  = metrics.CauseResigned  // a leader released by Resign (Event.Cause zklock.ErrResigned)
	CauseOther     = metrics.CauseOther
)

// Failure reasons, the values of the reason label of
// zklock_acquire_failures_total.
const (
	ReasonLocked      = metrics.ReasonLocked      // a try found the lock taken (zklock.ErrLocked)
	ReasonTimeout     = metrics.ReasonTimeout     // the context's deadline passed
	ReasonCanceled    = metrics.ReasonCanceled    // the context was cancelled
	ReasonExpired     = metrics.ReasonExpired     // the session expired while waiting
	ReasonClosed      = metrics.ReasonClosed      // the session was closed while waiting
	ReasonUnreachable = metrics.ReasonUnreachable // no server answered (zklock.ErrUnreachable)
	ReasonOther       = metrics.ReasonOther
)

// Cause names the reason of a loss error, as the cause label does.
func Cause(err error) string { return metrics.Cause(err) }

// Reason names why an acquire failed, as the reason label does.
func Reason(err error) string { return metrics.Reason(err) }

// Metrics is a prometheus.Collector fed by zklock events. Register it once
// and give its SessionOption (or Observer) to every session it should
// count. It is safe for concurrent use. It counts with the same engine as
// the zklock command's /metrics, so both serve the same series.
type Metrics struct {
	rec   *metrics.Recorder
	descs map[string]*prometheus.Desc // by family name
}

// Option configures New.
type Option func(*metrics.Config)

// WithNamespace sets the metric name prefix. Default: "zklock".
func WithNamespace(ns string) Option { return func(c *metrics.Config) { c.Namespace = ns } }

// WithBuckets sets the buckets (in seconds) of both histograms. Default:
// 1ms to about 16 minutes, in powers of 4 (1ms, 4ms, 16ms, ... 1048.6s).
func WithBuckets(b []float64) Option { return func(c *metrics.Config) { c.Buckets = b } }

// WithPathLabel adds a "path" label (the lock path) to the histograms and
// the counters. Default: off, since each path is a new series.
func WithPathLabel() Option { return func(c *metrics.Config) { c.PathLabel = true } }

// New returns unregistered metrics.
func New(opts ...Option) *Metrics {
	var c metrics.Config
	for _, o := range opts {
		o(&c)
	}
	rec := metrics.NewRecorder(c)
	c = rec.Config()
	m := &Metrics{rec: rec, descs: map[string]*prometheus.Desc{}}
	for _, f := range metrics.Families {
		m.descs[f.Name] = prometheus.NewDesc(prometheus.BuildFQName(c.Namespace, "", f.Name), f.Help, c.LabelNames(f), nil)
	}
	return m
}

// SessionOption is zklock.WithObserver(m.Observer()): pass it to
// zklock.Connect. Each call makes a new observer, for one session.
func (m *Metrics) SessionOption() zklock.SessionOption { return zklock.WithObserver(m.Observer()) }

// Observer returns an observer for one session (see zklock.WithObserver).
// The session counts as connecting from this call until its first state
// change. To feed a session's events to other code as well, call the
// observer from your own.
func (m *Metrics) Observer() func(zklock.Event) { return m.rec.Observer() }

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range metrics.Families {
		ch <- m.descs[f.Name]
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	buckets := m.rec.Config().Buckets
	for _, f := range metrics.Families {
		d := m.descs[f.Name]
		for _, s := range m.rec.Samples(f) {
			switch f.Type {
			case metrics.Histogram:
				cum := make(map[float64]uint64, len(buckets))
				for i, le := range buckets {
					cum[le] = s.Buckets[i]
				}
				ch <- prometheus.MustNewConstHistogram(d, s.Count, s.Sum, cum, s.Labels...)
			case metrics.Counter:
				ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, s.Value, s.Labels...)
			default:
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, s.Value, s.Labels...)
			}
		}
	}
}
