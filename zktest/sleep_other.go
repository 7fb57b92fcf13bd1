//go:build !linux

package zktest

import "time"

// shortSleep sleeps for d (at most a few milliseconds).
func shortSleep(d time.Duration) { time.Sleep(d) }
