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
	"context"
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zklock/zklock"
)

// Loss causes, the values of the cause label of zklock_losses_total.
const (
	CauseExpired   = "expired"   // the session expired (zklock.ErrSessionExpired)
	CauseSuspended = "suspended" // suspended past the loss limit (zklock.ErrSuspended)
	CauseNodeGone  = "node_gone" // the node vanished or changed owner (zklock.ErrNodeGone)
	CauseClosed    = "closed"    // the session was closed while holding (zklock.ErrClosed)
	CauseRevoked   = "revoked"   // released because revocation was asked (Event.Cause zklock.ErrRevoked)
	CauseResigned  = "resigned"  // a leader released by Resign (Event.Cause zklock.ErrResigned)
	CauseOther     = "other"
)

// Failure reasons, the values of the reason label of
// zklock_acquire_failures_total.
const (
	ReasonLocked      = "locked"      // a try found the lock taken (zklock.ErrLocked)
	ReasonTimeout     = "timeout"     // the context's deadline passed
	ReasonCanceled    = "canceled"    // the context was cancelled
	ReasonExpired     = "expired"     // the session expired while waiting
	ReasonClosed      = "closed"      // the session was closed while waiting
	ReasonUnreachable = "unreachable" // no server answered (zklock.ErrUnreachable)
	ReasonOther       = "other"
)

// Metrics is a prometheus.Collector fed by zklock events. Register it once
// and give its SessionOption (or Observer) to every session it should
// count. It is safe for concurrent use.
type Metrics struct {
	wait, hold         *prometheus.HistogramVec
	acquired, released *prometheus.CounterVec
	losses, failures   *prometheus.CounterVec
	held, waiting      *prometheus.GaugeVec
	sessions           *prometheus.GaugeVec
	retries            *prometheus.CounterVec
	leader             *prometheus.GaugeVec
	stateChanges       *prometheus.CounterVec
	pathLabel          bool
}

type config struct {
	namespace string
	buckets   []float64
	pathLabel bool
}

// Option configures New.
type Option func(*config)

// WithNamespace sets the metric name prefix. Default: "zklock".
func WithNamespace(ns string) Option { return func(c *config) { c.namespace = ns } }

// WithBuckets sets the buckets (in seconds) of both histograms. Default:
// 1ms to about 16 minutes, in powers of 4 (1ms, 4ms, 16ms, ... 1048.6s).
func WithBuckets(b []float64) Option { return func(c *config) { c.buckets = b } }

// WithPathLabel adds a "path" label (the lock path) to the histograms and
// the counters. Default: off, since each path is a new series.
func WithPathLabel() Option { return func(c *config) { c.pathLabel = true } }

// New returns unregistered metrics.
func New(opts ...Option) *Metrics {
	c := config{namespace: "zklock", buckets: prometheus.ExponentialBuckets(0.001, 4, 11)}
	for _, o := range opts {
		o(&c)
	}
	var labels []string
	if c.pathLabel {
		labels = []string{"path"}
	}
	recipe := append([]string{"recipe"}, labels...)
	return &Metrics{
		pathLabel: c.pathLabel,
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: c.namespace, Name: "acquire_wait_seconds",
			Help: "How long each lock acquisition waited, from the call to the hold.", Buckets: c.buckets}, recipe),
		hold: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: c.namespace, Name: "hold_seconds",
			Help: "How long each hold lasted, to its release or its loss.", Buckets: c.buckets}, recipe),
		acquired: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: "acquisitions_total",
			Help: "Locks acquired (re-entries are not counted)."}, recipe),
		released: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: "releases_total",
			Help: "Holds released by their holder."}, recipe),
		losses: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: "losses_total",
			Help: "Holds lost, by cause (expired, suspended, node_gone, closed, revoked, resigned, other)."},
			append([]string{"cause"}, recipe...)),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: "acquire_failures_total",
			Help: "Acquires that ended without a hold, by reason (locked, timeout, canceled, expired, closed, unreachable, other)."},
			append([]string{"reason"}, labels...)),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: c.namespace, Name: "held",
			Help: "Holds held now (each acquisition counts once, re-entries aside)."}, recipe),
		waiting: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: c.namespace, Name: "waiting",
			Help: "Acquires under way now."}, labels),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: c.namespace, Name: "sessions",
			Help: "Sessions in each state (connecting, connected, suspended, expired)."}, []string{"state"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: "acquire_retries_total",
			Help: "Acquires a recipe started again by itself after a failure (an election with WithRequeue, a latch)."}, recipe),
		leader: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: c.namespace, Name: "leader",
			Help: "1 while this process leads the election or latch at path, else 0."}, []string{"path", "recipe"}),
		stateChanges: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: c.namespace, Name: "session_state_changes_total",
			Help: "Session state changes, by the state entered (connected, suspended, expired, closed)."}, []string{"state"}),
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.wait, m.hold, m.acquired, m.released, m.losses, m.failures, m.held, m.waiting, m.sessions,
		m.retries, m.leader, m.stateChanges}
}

// SessionOption is zklock.WithObserver(m.Observer()): pass it to
// zklock.Connect. Each call makes a new observer, for one session.
func (m *Metrics) SessionOption() zklock.SessionOption { return zklock.WithObserver(m.Observer()) }

// Observer returns an observer for one session (see zklock.WithObserver).
// The session counts as connecting from this call until its first state
// change. To feed a session's events to other code as well, call the
// observer from your own.
func (m *Metrics) Observer() func(zklock.Event) {
	o := &sessionObserver{m: m, state: zklock.StateConnecting, waiting: map[uint64]bool{}, holding: map[uint64]bool{}}
	m.sessions.WithLabelValues(zklock.StateConnecting.String()).Inc()
	return o.observe
}

type sessionObserver struct {
	m     *Metrics
	mu    sync.Mutex
	state zklock.State
	// The acquires now waiting and holding, by Event.Acquire, so that
	// each moves the gauges once whatever the order of its events.
	waiting, holding map[uint64]bool
}

// gauges moves the held and waiting gauges for one acquire's event, once
// per acquire whatever the order of its events. A hand-made event without
// a number (Acquire 0) moves the held gauge only.
func (o *sessionObserver) gauges(ev zklock.Event, labels, recipe []string) {
	id := ev.Acquire
	o.mu.Lock()
	wasWaiting, wasHolding := o.waiting[id], o.holding[id]
	delete(o.waiting, id)
	delete(o.holding, id)
	waits, holds := ev.Kind == zklock.EventAcquiring, ev.Kind == zklock.EventAcquired
	if id == 0 {
		waits, wasWaiting = false, false
		wasHolding = ev.Kind == zklock.EventReleased || ev.Kind == zklock.EventLost
	} else {
		if waits {
			o.waiting[id] = true
		}
		if holds {
			o.holding[id] = true
		}
	}
	o.mu.Unlock()
	step := func(g *prometheus.GaugeVec, labels []string, was, is bool) {
		switch {
		case is && !was:
			g.WithLabelValues(labels...).Inc()
		case was && !is:
			g.WithLabelValues(labels...).Dec()
		}
	}
	step(o.m.waiting, labels, wasWaiting, waits)
	step(o.m.held, recipe, wasHolding, holds)
	if ev.Recipe == zklock.RecipeElection || ev.Recipe == zklock.RecipeLatch {
		step(o.m.leader, []string{ev.Path, ev.Recipe}, wasHolding, holds)
	}
}

func (o *sessionObserver) observe(ev zklock.Event) {
	m := o.m
	var labels []string
	if m.pathLabel {
		labels = []string{ev.Path}
	}
	recipe := append([]string{ev.Recipe}, labels...)
	switch ev.Kind {
	case zklock.EventState:
		o.mu.Lock()
		if ev.State != o.state && o.state != zklock.StateClosed {
			m.stateChanges.WithLabelValues(ev.State.String()).Inc()
			m.sessions.WithLabelValues(o.state.String()).Dec()
			if ev.State != zklock.StateClosed {
				m.sessions.WithLabelValues(ev.State.String()).Inc()
			}
			o.state = ev.State
		}
		o.mu.Unlock()
	case zklock.EventAcquiring:
		o.gauges(ev, labels, recipe)
	case zklock.EventAcquireFailed:
		o.gauges(ev, labels, recipe)
		m.failures.WithLabelValues(append([]string{Reason(ev.Err)}, labels...)...).Inc()
	case zklock.EventAcquired:
		o.gauges(ev, labels, recipe)
		m.acquired.WithLabelValues(recipe...).Inc()
		m.wait.WithLabelValues(recipe...).Observe(ev.Wait.Seconds())
	case zklock.EventReleased:
		o.gauges(ev, labels, recipe)
		m.released.WithLabelValues(recipe...).Inc()
		m.hold.WithLabelValues(recipe...).Observe(ev.Held.Seconds())
		if ev.Cause != nil { // a release a revocation or a Resign forced
			m.losses.WithLabelValues(append([]string{Cause(ev.Cause)}, recipe...)...).Inc()
		}
	case zklock.EventLost:
		o.gauges(ev, labels, recipe)
		m.losses.WithLabelValues(append([]string{Cause(ev.Err)}, recipe...)...).Inc()
		m.hold.WithLabelValues(recipe...).Observe(ev.Held.Seconds())
	case zklock.EventRetry:
		m.retries.WithLabelValues(recipe...).Inc()
	}
}

// Cause names the reason of a loss error, as the cause label does.
func Cause(err error) string {
	switch {
	case errors.Is(err, zklock.ErrSessionExpired):
		return CauseExpired
	case errors.Is(err, zklock.ErrSuspended):
		return CauseSuspended
	case errors.Is(err, zklock.ErrNodeGone):
		return CauseNodeGone
	case errors.Is(err, zklock.ErrClosed):
		return CauseClosed
	case errors.Is(err, zklock.ErrRevoked):
		return CauseRevoked
	case errors.Is(err, zklock.ErrResigned):
		return CauseResigned
	}
	return CauseOther
}

// Reason names why an acquire failed, as the reason label does.
func Reason(err error) string {
	switch {
	case errors.Is(err, zklock.ErrLocked):
		return ReasonLocked
	case errors.Is(err, zklock.ErrUnreachable):
		return ReasonUnreachable
	case errors.Is(err, zklock.ErrSessionExpired):
		return ReasonExpired
	case errors.Is(err, zklock.ErrClosed):
		return ReasonClosed
	case errors.Is(err, context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	}
	return ReasonOther
}
