package zktest

import (
	"syscall"
	"time"
)

// shortSleep sleeps for d (at most a few milliseconds) with the kernel's
// high-resolution timer. The Go runtime's timers round sub-millisecond
// waits up to about a millisecond on an idle process, which would turn the
// proxy's 0.25 ms delays into 1 ms ones; nanosleep overshoots by tens of
// microseconds. It blocks its OS thread, which the runtime replaces.
func shortSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR { //nolint:revive // resume with the time left
	}
}
