package zklockprom_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock"
	zklockprom "github.com/zklock/zklock/contrib/prometheus"
	"github.com/zklock/zklock/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// An acquire, a release and a loss (the server expires the session) on a
// real ZooKeeper move exactly the metrics they should.
func TestIntegration_Metrics(t *testing.T) {
	c := zktest.Start(t)
	m := zklockprom.New()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(m))

	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(4*time.Second), m.SessionOption())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.WaitConnected(ctx))
	assertSessions(t, reg, map[string]float64{"connecting": 0, "connected": 1})

	mu, err := zklock.NewMutex(s, "/locks/metrics")
	require.NoError(t, err)
	h, err := mu.Lock(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1.0, value(t, reg, "zklock_acquisitions_total", nil))
	assert.Equal(t, uint64(1), histogramCount(t, reg, "zklock_acquire_wait_seconds"))
	assert.Equal(t, uint64(0), histogramCount(t, reg, "zklock_hold_seconds"))
	require.NoError(t, h.Release())
	assert.Equal(t, 1.0, value(t, reg, "zklock_releases_total", nil))
	assert.Equal(t, uint64(1), histogramCount(t, reg, "zklock_hold_seconds"))

	h, err = mu.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Expire(s.ID()))
	select {
	case <-h.Done():
	case <-ctx.Done():
		t.Fatal("the hold was not lost after the expiry")
	}
	require.ErrorIs(t, h.Err(), zklock.ErrSessionExpired)
	assert.Equal(t, 2.0, value(t, reg, "zklock_acquisitions_total", nil))
	assert.Equal(t, uint64(2), histogramCount(t, reg, "zklock_hold_seconds"), "the lost hold's time counts")
	assert.Equal(t, 1.0, lossCount(t, reg, "expired"))
	assert.Equal(t, 0.0, lossCount(t, reg, "suspended"))
	// The session comes back as a new one: connected again.
	require.NoError(t, s.WaitConnected(ctx))
	require.Eventually(t, func() bool { return sessionsIn(t, reg, "connected") == 1 }, 10*time.Second, 5*time.Millisecond)
	assertSessions(t, reg, map[string]float64{"connecting": 0, "connected": 1, "expired": 0})

	require.NoError(t, s.Close())
	assertSessions(t, reg, map[string]float64{"connecting": 0, "connected": 0, "suspended": 0, "expired": 0})

	// Every metric is exported, under its documented name.
	for _, name := range []string{"zklock_acquire_wait_seconds", "zklock_hold_seconds", "zklock_acquisitions_total",
		"zklock_releases_total", "zklock_losses_total", "zklock_sessions"} {
		assert.Equal(t, name, family(t, reg, name).GetName())
	}
}

func TestCause(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSessionExpired): zklockprom.CauseExpired,
		fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSuspended):      zklockprom.CauseSuspended,
		fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrNodeGone):       zklockprom.CauseNodeGone,
		fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrClosed):         zklockprom.CauseClosed,
		errors.New("something else"):                                   zklockprom.CauseOther,
	} {
		assert.Equal(t, want, zklockprom.Cause(err), "%v", err)
	}
}

// WithPathLabel splits the series by lock path.
func TestObserverPathLabel(t *testing.T) {
	m := zklockprom.New(zklockprom.WithPathLabel(), zklockprom.WithNamespace("app"))
	obs := m.Observer()
	obs(zklock.Event{Kind: zklock.EventAcquired, Path: "/a", Wait: time.Millisecond, Recipe: zklock.RecipeMutex})
	obs(zklock.Event{Kind: zklock.EventAcquired, Path: "/b", Wait: time.Second, Recipe: zklock.RecipeMutex})
	obs(zklock.Event{Kind: zklock.EventLost, Path: "/b", Held: time.Second, Recipe: zklock.RecipeMutex,
		Err: fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSuspended)})
	obs(zklock.Event{Kind: zklock.EventState, State: zklock.StateConnected})
	want := `
# HELP app_losses_total Holds lost, by cause (expired, suspended, node_gone, closed, revoked, resigned, other).
# TYPE app_losses_total counter
app_losses_total{cause="suspended",path="/b",recipe="mutex"} 1
# HELP app_acquisitions_total Locks acquired (re-entries are not counted).
# TYPE app_acquisitions_total counter
app_acquisitions_total{path="/a",recipe="mutex"} 1
app_acquisitions_total{path="/b",recipe="mutex"} 1
# HELP app_sessions Sessions in each state (connecting, connected, suspended, expired).
# TYPE app_sessions gauge
app_sessions{state="connected"} 1
app_sessions{state="connecting"} 0
`
	require.NoError(t, testutil.CollectAndCompare(m, strings.NewReader(want),
		"app_losses_total", "app_acquisitions_total", "app_sessions"))
}

// value is the value of the counter or gauge name whose labels include
// want, 0 if there is none.
func value(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	for _, m := range family(t, reg, name).GetMetric() {
		if hasLabels(m, want) {
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok && v == lp.GetValue() {
			n++
		}
	}
	return n == len(want)
}

func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	var n uint64
	for _, m := range family(t, reg, name).GetMetric() {
		n += m.GetHistogram().GetSampleCount()
	}
	return n
}

func family(t *testing.T, reg *prometheus.Registry, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	return &dto.MetricFamily{}
}

func lossCount(t *testing.T, reg *prometheus.Registry, cause string) float64 {
	t.Helper()
	return value(t, reg, "zklock_losses_total", map[string]string{"cause": cause})
}

func sessionsIn(t *testing.T, reg *prometheus.Registry, state string) float64 {
	t.Helper()
	return value(t, reg, "zklock_sessions", map[string]string{"state": state})
}

// assertSessions waits until the session gauge shows want: the observer
// hears of a state change just after the session shows it, so a caller that
// saw the state may look a moment too early.
func assertSessions(t *testing.T, reg *prometheus.Registry, want map[string]float64) {
	t.Helper()
	matches := func() bool {
		fams, err := reg.Gather()
		if err != nil {
			return false
		}
		for state, n := range want {
			got := 0.0
			for _, f := range fams {
				if f.GetName() != "zklock_sessions" {
					continue
				}
				for _, m := range f.GetMetric() {
					if hasLabels(m, map[string]string{"state": state}) {
						got = m.GetGauge().GetValue()
					}
				}
			}
			if got != n {
				return false
			}
		}
		return true
	}
	require.Eventually(t, matches, 10*time.Second, time.Millisecond)
	for state, n := range want {
		assert.Equal(t, n, sessionsIn(t, reg, state), "sessions %s", state)
	}
}
