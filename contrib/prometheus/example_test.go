package zklockprom_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zklock/zklock"
	zklockprom "github.com/zklock/zklock/contrib/prometheus"
)

// Register the metrics and give every session its observer. Here the
// observer is fed by hand; with a server, pass m.SessionOption() to
// zklock.Connect and the session feeds it.
func Example() {
	m := zklockprom.New()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	// sess, err := zklock.Connect(servers, m.SessionOption())

	observe := m.Observer()
	observe(zklock.Event{Kind: zklock.EventState, State: zklock.StateConnected})
	observe(zklock.Event{Kind: zklock.EventAcquired, Path: "/locks/job", Wait: 20 * time.Millisecond, Recipe: zklock.RecipeMutex})
	observe(zklock.Event{Kind: zklock.EventState, State: zklock.StateSuspended})
	observe(zklock.Event{Kind: zklock.EventLost, Path: "/locks/job", Held: 3 * time.Second, Recipe: zklock.RecipeMutex,
		Err: fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSuspended)})
	observe(zklock.Event{Kind: zklock.EventState, State: zklock.StateConnected})

	mfs, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			var labels []string
			for _, lp := range mt.GetLabel() {
				labels = append(labels, lp.GetName()+"="+lp.GetValue())
			}
			line := strings.TrimSpace(mf.GetName() + " " + strings.Join(labels, ","))
			switch {
			case mt.GetHistogram() != nil:
				fmt.Printf("%s count=%d sum=%gs\n", line, mt.GetHistogram().GetSampleCount(), mt.GetHistogram().GetSampleSum())
			case mt.GetCounter() != nil:
				fmt.Println(line, mt.GetCounter().GetValue())
			case mt.GetGauge() != nil:
				fmt.Println(line, mt.GetGauge().GetValue())
			}
		}
	}
	// Output:
	// zklock_acquire_wait_seconds recipe=mutex count=1 sum=0.02s
	// zklock_acquisitions_total recipe=mutex 1
	// zklock_held recipe=mutex 0
	// zklock_hold_seconds recipe=mutex count=1 sum=3s
	// zklock_losses_total cause=suspended,recipe=mutex 1
	// zklock_session_state_changes_total state=connected 2
	// zklock_session_state_changes_total state=suspended 1
	// zklock_sessions state=connected 1
	// zklock_sessions state=connecting 0
	// zklock_sessions state=suspended 0
}
