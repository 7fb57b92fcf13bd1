package zklockotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/zklock/zklock"
	zklockotel "github.com/zklock/zklock/contrib/otel"
	"github.com/zklock/zklock/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// spans returns the ended spans named name, by their parent's span id.
func spans(exp *tracetest.InMemoryExporter, name string) map[trace.SpanID]tracetest.SpanStub {
	out := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			out[s.Parent.SpanID()] = s
		}
	}
	return out
}

// An acquire inside a caller's span yields a zklock.wait span and a
// zklock.hold span, both children of the caller's span in its trace, the
// wait ending as the hold starts; a loss (another client deletes the
// holder's node) ends the hold span with the event zklock.lost and an
// Error status; a waiter's wait spans the time it queued.
func TestIntegration_SpansJoinTheCallersTrace(t *testing.T) {
	c := zktest.Start(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := zklockotel.New(zklockotel.WithTracerProvider(tp))
	connect := func() *zklock.Session {
		s, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(4*time.Second), tr.SessionOption())
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s1, s2 := connect(), connect()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	caller, span := tp.Tracer("test").Start(ctx, "caller")
	m1, err := zklock.NewMutex(s1, "/locks/traced")
	require.NoError(t, err)
	h, err := m1.Lock(caller)
	require.NoError(t, err)

	// A second caller queues behind the first.
	caller2, span2 := tp.Tracer("test").Start(ctx, "caller2")
	m2, err := zklock.NewMutex(s2, "/locks/traced")
	require.NoError(t, err)
	got := make(chan *zklock.Hold, 1)
	go func() {
		h2, err := m2.Lock(caller2)
		if err != nil {
			t.Error(err)
		}
		got <- h2
	}()
	require.Eventually(t, func() bool { ps, _ := m1.Participants(ctx); return len(ps) == 2 }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, s2.Conn().Delete(h.Node(), -1), "another client deletes the holder's node")
	<-h.Done()
	require.ErrorIs(t, h.Err(), zklock.ErrNodeGone)
	h2 := <-got
	require.NoError(t, h2.Release())
	span.End()
	span2.End()

	waits, holds := spans(exp, zklockotel.SpanWait), spans(exp, zklockotel.SpanHold)
	require.Len(t, waits, 2)
	require.Len(t, holds, 2)
	for _, want := range []trace.SpanContext{span.SpanContext(), span2.SpanContext()} {
		w, ok := waits[want.SpanID()]
		require.True(t, ok, "no wait span whose parent is the caller's span")
		hs, ok := holds[want.SpanID()]
		require.True(t, ok, "no hold span whose parent is the caller's span")
		require.Equal(t, want.TraceID(), w.SpanContext.TraceID())
		require.Equal(t, want.TraceID(), hs.SpanContext.TraceID())
		require.False(t, hs.StartTime.Before(w.EndTime), "the hold starts as the wait ends")
	}
	second := waits[span2.SpanContext().SpanID()]
	require.Positive(t, second.EndTime.Sub(second.StartTime), "the second caller queued")

	lost := holds[span.SpanContext().SpanID()]
	require.Len(t, lost.Events, 1)
	require.Equal(t, zklockotel.EventLost, lost.Events[0].Name)
	require.Contains(t, lost.Status.Description, "node")
	require.Equal(t, "Error", lost.Status.Code.String())
	require.Empty(t, holds[span2.SpanContext().SpanID()].Events, "a release is no event")
}
