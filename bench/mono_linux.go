package bench

import (
	"syscall"
	"unsafe"
)

// monoOK: mono reads a clock shared by every process of the machine.
const monoOK = true

// mono is CLOCK_MONOTONIC in nanoseconds, the clock the leader processes
// stamp their events with (Go's own monotonic readings are relative to
// the process start; Java's System.nanoTime reads this clock).
func mono() int64 {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0) // 1: CLOCK_MONOTONIC
	return ts.Nano()
}
