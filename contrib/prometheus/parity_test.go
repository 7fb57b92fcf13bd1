package zklockprom_test

import (
	"bytes"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	zklockprom "github.com/zklock/zklock/contrib/prometheus"
	"github.com/zklock/zklock/internal/metrics"
)

// The zklock command's /metrics writes the engine's series in the text
// format; the Collector serves them through the Prometheus client. For the
// same events both give the same families, types, series and values.
func TestTextFormatMatchesTheCollector(t *testing.T) {
	events := []zklock.Event{
		{Kind: zklock.EventState, State: zklock.StateConnected},
		{Kind: zklock.EventAcquiring, Acquire: 1, Path: "/locks/a", Recipe: zklock.RecipeElection},
		{Kind: zklock.EventAcquired, Acquire: 1, Path: "/locks/a", Recipe: zklock.RecipeElection, Wait: 3 * time.Millisecond},
		{Kind: zklock.EventAcquiring, Acquire: 2, Path: "/locks/b", Recipe: zklock.RecipeMutex},
		{Kind: zklock.EventAcquireFailed, Acquire: 2, Path: "/locks/b", Recipe: zklock.RecipeMutex, Err: zklock.ErrLocked},
		{Kind: zklock.EventState, State: zklock.StateSuspended},
		{Kind: zklock.EventLost, Acquire: 1, Path: "/locks/a", Recipe: zklock.RecipeElection, Held: 2 * time.Second,
			Err: errors.Join(zklock.ErrLost, zklock.ErrSuspended)},
		{Kind: zklock.EventRetry, Path: "/locks/a", Recipe: zklock.RecipeElection},
		{Kind: zklock.EventAcquiring, Acquire: 3, Path: "/locks/c", Recipe: zklock.RecipeSemaphore},
		{Kind: zklock.EventAcquired, Acquire: 3, Path: "/locks/c", Recipe: zklock.RecipeSemaphore, Wait: time.Second},
		{Kind: zklock.EventReleased, Acquire: 3, Path: "/locks/c", Recipe: zklock.RecipeSemaphore, Held: time.Minute,
			Cause: zklock.ErrRevoked},
		{Kind: zklock.EventState, State: zklock.StateConnected},
	}
	for _, path := range []bool{false, true} {
		var opts []zklockprom.Option
		if path {
			opts = append(opts, zklockprom.WithPathLabel())
		}
		m := zklockprom.New(opts...)
		rec := metrics.NewRecorder(metrics.Config{PathLabel: path})
		mo, ro := m.Observer(), rec.Observer()
		for _, ev := range events {
			mo(ev)
			ro(ev)
		}
		reg := prometheus.NewRegistry()
		require.NoError(t, reg.Register(m))
		gathered, err := reg.Gather()
		require.NoError(t, err)
		var fromCollector bytes.Buffer
		for _, mf := range gathered {
			_, err := expfmt.MetricFamilyToText(&fromCollector, mf)
			require.NoError(t, err)
		}
		var text bytes.Buffer
		require.NoError(t, rec.WriteText(&text))
		parser := expfmt.NewTextParser(model.LegacyValidation)
		parsed, err := parser.TextToMetricFamilies(&text)
		require.NoError(t, err, text.String())
		var fromText bytes.Buffer
		names := make([]string, 0, len(parsed))
		for n := range parsed {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			_, err := expfmt.MetricFamilyToText(&fromText, parsed[n])
			require.NoError(t, err)
		}
		require.Equal(t, fromCollector.String(), fromText.String())
		require.Equal(t, len(metrics.Families), len(gathered), "every family has a series")
		require.Regexp(t, `zklock_losses_total\{cause="suspended",(path="/locks/a",)?recipe="election"\} 1`, fromText.String())
		require.Contains(t, fromText.String(), `zklock_leader{path="/locks/a",recipe="election"} 0`)
	}
}
