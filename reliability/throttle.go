package reliability

import (
	"context"
	"math/rand/v2"
	"syscall"
	"time"
)

// FaultThrottleClient: a worker process stopped and continued in short
// bursts (SIGSTOP/SIGCONT), a CPU-starved or throttled holder rather than
// one stopped once (S21). The nemesis logs a burst as one fault, from the
// first SIGSTOP to the last SIGCONT; the checkers treat it as a pause of
// that length (C1, C3: the process was stopped at times within it), and
// C6's resume bound does not apply (no single stop outlasts the loss limit).
const FaultThrottleClient = "throttle-client"

// ThrottleHolder throttles the process of a current holder every period:
// for burst, it is stopped for one of stops and then runs for one of runs
// (picked at random per burst), again and again, like a process given a
// small CPU quota. It is running when the fault ends.
func ThrottleHolder(period, burst time.Duration, stops, runs []time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			w := e.holderProc()
			stop, run := stops[rand.IntN(len(stops))], runs[rand.IntN(len(runs))]
			e.Fault(FaultThrottleClient, w.Name, 0, func() error {
				for end := time.Now().Add(burst); time.Now().Before(end); {
					if err := w.Signal(syscall.SIGSTOP); err != nil {
						return err
					}
					time.Sleep(stop)
					if err := w.Signal(syscall.SIGCONT); err != nil {
						return err
					}
					time.Sleep(run)
				}
				return nil
			}, func() error { return w.Signal(syscall.SIGCONT) })
		})
	}
}
