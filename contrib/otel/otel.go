// Package zklockotel records zklock's lock waits and holds as OpenTelemetry
// spans in the caller's trace. It is built on zklock.WithObserver and lives
// in its own module, so that the zklock library does not depend on
// OpenTelemetry.
//
//	t := zklockotel.New() // the global TracerProvider, or WithTracerProvider
//	sess, err := zklock.Connect(servers, t.SessionOption())
//	...
//	ctx, span := tracer.Start(ctx, "nightly-report")
//	hold, err := m.Lock(ctx) // a zklock.wait span, then a zklock.hold span, children of span
//
// For each acquire that holds, it records two spans, children of the span
// in the context given to the acquire (Lock, Acquire, Run, Campaign, ...;
// zklock.Event.Context carries it):
//
//	zklock.wait  from the acquire's call to the hold (its start is the hold's
//	             time less the wait zklock measured)
//	zklock.hold  from the hold to its release or loss
//
// Both carry the attributes zklock.path, zklock.recipe, zklock.node and
// zklock.token. While a hold lasts, the session's state changes are span
// events of its zklock.hold span (zklock.suspended, zklock.expired,
// zklock.connected, zklock.closed). A loss is the span event zklock.lost,
// with the cause, and sets the span's status to Error; a release forced by a
// revocation or a Resign is the span event zklock.revoked or
// zklock.resigned. An acquire that fails yields a zklock.wait span with an
// Error status when its event carries the acquire's context.
package zklockotel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/zklock/zklock"
)

// The instrumentation scope's name, given to the TracerProvider.
const ScopeName = "github.com/zklock/zklock/contrib/otel"

// Span names and the names of span events.
const (
	SpanWait  = "zklock.wait"
	SpanHold  = "zklock.hold"
	EventLost = "zklock.lost"
)

// Tracer turns zklock events into spans. It is safe for concurrent use;
// give its SessionOption (or Observer) to every session it should trace.
type Tracer struct {
	tracer trace.Tracer
}

type config struct{ provider trace.TracerProvider }

// Option configures New.
type Option func(*config)

// WithTracerProvider sets the TracerProvider. Default: otel.GetTracerProvider().
func WithTracerProvider(p trace.TracerProvider) Option { return func(c *config) { c.provider = p } }

// New returns a Tracer.
func New(opts ...Option) *Tracer {
	var c config
	for _, o := range opts {
		o(&c)
	}
	if c.provider == nil {
		c.provider = otel.GetTracerProvider()
	}
	return &Tracer{tracer: c.provider.Tracer(ScopeName)}
}

// SessionOption is zklock.WithObserver(t.Observer()): pass it to
// zklock.Connect. Each call makes a new observer, for one session.
func (t *Tracer) SessionOption() zklock.SessionOption { return zklock.WithObserver(t.Observer()) }

// Observer returns an observer for one session (see zklock.WithObserver).
// To feed a session's events to other code as well (zklockprom's metrics),
// call each observer from your own.
func (t *Tracer) Observer() func(zklock.Event) {
	o := &observer{t: t, holds: map[uint64]trace.Span{}}
	return o.observe
}

type observer struct {
	t     *Tracer
	mu    sync.Mutex
	holds map[uint64]trace.Span // the hold spans open, by Event.Acquire
}

func attrs(ev zklock.Event) trace.SpanStartEventOption {
	return trace.WithAttributes(
		attribute.String("zklock.path", ev.Path),
		attribute.String("zklock.recipe", ev.Recipe),
		attribute.String("zklock.node", ev.Node),
		attribute.Int64("zklock.token", ev.Token))
}

func parent(ev zklock.Event) context.Context {
	if ev.Context != nil {
		return ev.Context
	}
	return context.Background()
}

func (o *observer) observe(ev zklock.Event) {
	now := time.Now()
	switch ev.Kind {
	case zklock.EventAcquired:
		_, wait := o.t.tracer.Start(parent(ev), SpanWait, attrs(ev), trace.WithTimestamp(now.Add(-ev.Wait)))
		wait.End(trace.WithTimestamp(now))
		_, hold := o.t.tracer.Start(parent(ev), SpanHold, attrs(ev), trace.WithTimestamp(now))
		o.mu.Lock()
		o.holds[ev.Acquire] = hold
		o.mu.Unlock()
	case zklock.EventAcquireFailed:
		if ev.Context == nil {
			return // no trace to join
		}
		_, wait := o.t.tracer.Start(ev.Context, SpanWait, attrs(ev), trace.WithTimestamp(now.Add(-ev.Wait)))
		wait.RecordError(ev.Err)
		wait.SetStatus(codes.Error, ev.Err.Error())
		wait.End(trace.WithTimestamp(now))
	case zklock.EventReleased, zklock.EventLost:
		o.mu.Lock()
		hold, ok := o.holds[ev.Acquire]
		delete(o.holds, ev.Acquire)
		o.mu.Unlock()
		if !ok {
			return
		}
		switch {
		case ev.Kind == zklock.EventLost:
			hold.AddEvent(EventLost, trace.WithTimestamp(now), trace.WithAttributes(attribute.String("zklock.cause", errString(ev.Err))))
			hold.SetStatus(codes.Error, errString(ev.Err))
		case ev.Cause != nil:
			name := "zklock.released"
			switch {
			case errors.Is(ev.Cause, zklock.ErrRevoked):
				name = "zklock.revoked"
			case errors.Is(ev.Cause, zklock.ErrResigned):
				name = "zklock.resigned"
			}
			hold.AddEvent(name, trace.WithTimestamp(now))
		}
		hold.End(trace.WithTimestamp(now))
	case zklock.EventState:
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, hold := range o.holds {
			hold.AddEvent("zklock."+ev.State.String(), trace.WithTimestamp(now),
				trace.WithAttributes(attribute.String("zklock.session", sessionID(ev.Session))))
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func sessionID(id int64) string { return fmt.Sprintf("0x%x", id) }
