// Package metrics counts a process's zklock events for Prometheus: one
// engine, so that contrib/prometheus (on the Prometheus client) and the
// CLI's /metrics (in the text format, with the standard library) serve the
// same names, labels and values. It depends on the zklock library only.
package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/zklock/zklock"
)

// Type is a metric family's type, as the text format names it.
type Type string

// The types of the families.
const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
)

// A Family is one metric family: its name without the namespace, its
// type, its help and its label names.
type Family struct {
	Name   string
	Type   Type
	Help   string
	Labels []string
}

// The families, in the order they are written. Those whose labels say
// "path?" carry the path label only with Config.PathLabel.
var (
	Wait         = Family{"acquire_wait_seconds", Histogram, "How long each lock acquisition waited, from the call to the hold.", []string{"recipe", "path?"}}
	Hold         = Family{"hold_seconds", Histogram, "How long each hold lasted, to its release or its loss.", []string{"recipe", "path?"}}
	Acquired     = Family{"acquisitions_total", Counter, "Locks acquired (re-entries are not counted).", []string{"recipe", "path?"}}
	Released     = Family{"releases_total", Counter, "Holds released by their holder.", []string{"recipe", "path?"}}
	Losses       = Family{"losses_total", Counter, "Holds lost, by cause (expired, suspended, node_gone, closed, revoked, resigned, other).", []string{"cause", "recipe", "path?"}}
	Failures     = Family{"acquire_failures_total", Counter, "Acquires that ended without a hold, by reason (locked, timeout, canceled, expired, closed, unreachable, other).", []string{"reason", "path?"}}
	Held         = Family{"held", Gauge, "Holds held now (each acquisition counts once, re-entries aside).", []string{"recipe", "path?"}}
	Waiting      = Family{"waiting", Gauge, "Acquires under way now.", []string{"path?"}}
	Sessions     = Family{"sessions", Gauge, "Sessions in each state (connecting, connected, suspended, expired).", []string{"state"}}
	Retries      = Family{"acquire_retries_total", Counter, "Acquires a recipe started again by itself after a failure (an election with WithRequeue, a latch).", []string{"recipe", "path?"}}
	Leader       = Family{"leader", Gauge, "1 while this process leads the election or latch at path, else 0.", []string{"path", "recipe"}}
	StateChanges = Family{"session_state_changes_total", Counter, "Session state changes, by the state entered (connected, suspended, expired, closed).", []string{"state"}}

	Families = []Family{Wait, Hold, Acquired, Released, Losses, Failures, Held, Waiting, Sessions, Retries, Leader, StateChanges}
)

// LabelNames returns f's label names under c.
func (c Config) LabelNames(f Family) []string {
	var out []string
	for _, l := range f.Labels {
		if name, ok := strings.CutSuffix(l, "?"); !ok {
			out = append(out, l)
		} else if c.PathLabel {
			out = append(out, name)
		}
	}
	return out
}

// Loss causes, the values of the cause label of losses_total.
const (
	CauseExpired   = "expired"   // the session expired (zklock.ErrSessionExpired)
	CauseSuspended = "suspended" // suspended past the loss limit (zklock.ErrSuspended)
	CauseNodeGone  = "node_gone" // the node vanished or changed owner (zklock.ErrNodeGone)
	CauseClosed    = "closed"    // the session was closed while holding (zklock.ErrClosed)
	CauseRevoked   = "revoked"   // released because revocation was asked (Event.Cause zklock.ErrRevoked)
	CauseResigned  = "resigned"  // a leader released by Resign (Event.Cause zklock.ErrResigned)
	CauseOther     = "other"
)

// Failure reasons, the values of the reason label of acquire_failures_total.
const (
	ReasonLocked      = "locked"      // a try found the lock taken (zklock.ErrLocked)
	ReasonTimeout     = "timeout"     // the context's deadline passed
	ReasonCanceled    = "canceled"    // the context was cancelled
	ReasonExpired     = "expired"     // the session expired while waiting
	ReasonClosed      = "closed"      // the session was closed while waiting
	ReasonUnreachable = "unreachable" // no server answered (zklock.ErrUnreachable)
	ReasonOther       = "other"
)

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

// Config is how a Recorder names and buckets what it counts.
type Config struct {
	Namespace string    // the name prefix: "zklock" if empty
	Buckets   []float64 // the histograms' upper bounds, ascending: DefaultBuckets if nil
	PathLabel bool      // a path label on the families that may carry one
}

// DefaultBuckets are 1ms to about 17 minutes, in powers of 4.
var DefaultBuckets = func() []float64 {
	b := make([]float64, 11)
	for i := range b {
		b[i] = 0.001 * math.Pow(4, float64(i))
	}
	return b
}()

// A Sample is one series of a family: its label values, and its value or,
// for a histogram, its count, sum and cumulative bucket counts.
type Sample struct {
	Labels  []string
	Value   float64
	Count   uint64
	Sum     float64
	Buckets []uint64 // cumulative, one per Config.Buckets
}

// Recorder counts the events of the sessions it observes. It is safe for
// concurrent use.
type Recorder struct {
	cfg Config

	mu     sync.Mutex
	series map[string]map[string]*Sample // by family name, then joined label values
}

// NewRecorder returns an empty Recorder.
func NewRecorder(cfg Config) *Recorder {
	if cfg.Namespace == "" {
		cfg.Namespace = "zklock"
	}
	if cfg.Buckets == nil {
		cfg.Buckets = DefaultBuckets
	}
	return &Recorder{cfg: cfg, series: map[string]map[string]*Sample{}}
}

// Config returns the Recorder's configuration, defaults filled in.
func (r *Recorder) Config() Config { return r.cfg }

// sample returns f's series with labels; r.mu is held.
func (r *Recorder) sample(f Family, labels ...string) *Sample {
	m := r.series[f.Name]
	if m == nil {
		m = map[string]*Sample{}
		r.series[f.Name] = m
	}
	key := strings.Join(labels, "\xff")
	s := m[key]
	if s == nil {
		s = &Sample{Labels: labels}
		if f.Type == Histogram {
			s.Buckets = make([]uint64, len(r.cfg.Buckets))
		}
		m[key] = s
	}
	return s
}

func (r *Recorder) add(f Family, v float64, labels ...string) { r.sample(f, labels...).Value += v }

func (r *Recorder) observe(f Family, v float64, labels ...string) {
	s := r.sample(f, labels...)
	s.Count++
	s.Sum += v
	for i, le := range r.cfg.Buckets {
		if v <= le {
			s.Buckets[i]++
		}
	}
}

// Samples returns a copy of f's series, sorted by their label values.
func (r *Recorder) Samples(f Family) []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Sample, 0, len(r.series[f.Name]))
	for _, s := range r.series[f.Name] {
		c := *s
		c.Labels = slices.Clone(s.Labels)
		c.Buckets = slices.Clone(s.Buckets)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Sample) int { return slices.Compare(a.Labels, b.Labels) })
	return out
}

// Observer returns an observer for one session (see zklock.WithObserver).
// The session counts as connecting from this call until its first state
// change.
func (r *Recorder) Observer() func(zklock.Event) {
	o := &session{r: r, state: zklock.StateConnecting, waiting: map[uint64]bool{}, holding: map[uint64]bool{}}
	r.mu.Lock()
	r.add(Sessions, 1, zklock.StateConnecting.String())
	r.mu.Unlock()
	return o.observe
}

// session is one session's observer.
type session struct {
	r     *Recorder
	state zklock.State
	// The acquires now waiting and holding, by Event.Acquire, so that
	// each moves the gauges once whatever the order of its events.
	waiting, holding map[uint64]bool
}

func (o *session) observe(ev zklock.Event) {
	r := o.r
	var path []string
	if r.cfg.PathLabel {
		path = []string{ev.Path}
	}
	recipe := append([]string{ev.Recipe}, path...)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev.Kind {
	case zklock.EventState:
		if ev.State != o.state && o.state != zklock.StateClosed {
			r.add(StateChanges, 1, ev.State.String())
			r.add(Sessions, -1, o.state.String())
			if ev.State != zklock.StateClosed {
				r.add(Sessions, 1, ev.State.String())
			}
			o.state = ev.State
		}
	case zklock.EventAcquiring:
		o.gauges(ev, path, recipe)
	case zklock.EventAcquireFailed:
		o.gauges(ev, path, recipe)
		r.add(Failures, 1, append([]string{Reason(ev.Err)}, path...)...)
	case zklock.EventAcquired:
		o.gauges(ev, path, recipe)
		r.add(Acquired, 1, recipe...)
		r.observe(Wait, ev.Wait.Seconds(), recipe...)
	case zklock.EventReleased:
		o.gauges(ev, path, recipe)
		r.add(Released, 1, recipe...)
		r.observe(Hold, ev.Held.Seconds(), recipe...)
		if ev.Cause != nil { // a release a revocation or a Resign forced
			r.add(Losses, 1, append([]string{Cause(ev.Cause)}, recipe...)...)
		}
	case zklock.EventLost:
		o.gauges(ev, path, recipe)
		r.add(Losses, 1, append([]string{Cause(ev.Err)}, recipe...)...)
		r.observe(Hold, ev.Held.Seconds(), recipe...)
	case zklock.EventRetry:
		r.add(Retries, 1, recipe...)
	}
}

// gauges moves the held, waiting and leader gauges for one acquire's
// event, once per acquire whatever the order of its events. A hand-made
// event without a number (Acquire 0) moves the held gauge only. r.mu is
// held.
func (o *session) gauges(ev zklock.Event, path, recipe []string) {
	id := ev.Acquire
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
	step := func(f Family, labels []string, was, is bool) {
		switch {
		case is && !was:
			o.r.add(f, 1, labels...)
		case was && !is:
			o.r.add(f, -1, labels...)
		}
	}
	step(Waiting, path, wasWaiting, waits)
	step(Held, recipe, wasHolding, holds)
	if ev.Recipe == zklock.RecipeElection || ev.Recipe == zklock.RecipeLatch {
		step(Leader, []string{ev.Path, ev.Recipe}, wasHolding, holds)
	}
}

// WriteText writes every series in Prometheus' text format (0.0.4).
func (r *Recorder) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, f := range Families {
		samples := r.Samples(f)
		if len(samples) == 0 {
			continue
		}
		name := r.cfg.Namespace + "_" + f.Name
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, f.Help, name, f.Type)
		names := r.cfg.LabelNames(f)
		for _, s := range samples {
			if f.Type != Histogram {
				fmt.Fprintf(&b, "%s%s %s\n", name, labelText(names, s.Labels, ""), strconv.FormatFloat(s.Value, 'g', -1, 64))
				continue
			}
			for i, le := range r.cfg.Buckets {
				fmt.Fprintf(&b, "%s_bucket%s %d\n", name, labelText(names, s.Labels, strconv.FormatFloat(le, 'g', -1, 64)), s.Buckets[i])
			}
			fmt.Fprintf(&b, "%s_bucket%s %d\n", name, labelText(names, s.Labels, "+Inf"), s.Count)
			fmt.Fprintf(&b, "%s_sum%s %s\n", name, labelText(names, s.Labels, ""), strconv.FormatFloat(s.Sum, 'g', -1, 64))
			fmt.Fprintf(&b, "%s_count%s %d\n", name, labelText(names, s.Labels, ""), s.Count)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// labelText is a series' label set in the text format, sorted by name as
// the Prometheus client writes them, with le last if given.
func labelText(names, values []string, le string) string {
	var parts []string
	for i, n := range names {
		parts = append(parts, n+"="+quote(values[i]))
	}
	slices.Sort(parts)
	if le != "" {
		parts = append(parts, "le="+quote(le))
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
