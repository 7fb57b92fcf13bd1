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
	observe(zklock.Event{Kind: zklock.EventAcquired, Path: "/locks/job", Wait: 20 * time.Millisecond})
	observe(zklock.Event{Kind: zklock.EventLost, Path: "/locks/job", Held: 3 * time.Second,
		Err: fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSuspended)})

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
	// zklock_acquire_wait_seconds count=1 sum=0.02s
	// zklock_acquisitions_total 1
	// zklock_held 0
	// zklock_hold_seconds count=1 sum=3s
	// zklock_losses_total cause=suspended 1
	// zklock_sessions state=connected 1
	// zklock_sessions state=connecting 0
}
