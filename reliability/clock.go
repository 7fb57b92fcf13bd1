package reliability

import (
	"syscall"
	"unsafe"
)

// Mono returns CLOCK_MONOTONIC in nanoseconds, read with the raw
// clock_gettime(2) system call.
//
// Why not time.Now: Go's monotonic reading is relative to the start of each
// process, so two processes' readings cannot be compared. CLOCK_MONOTONIC is
// one clock for the whole machine (it counts from boot and is never stepped),
// so events stamped with it in different worker processes, the register and
// the suite compare exactly. golang.org/x/sys is not a dependency of the
// module, hence the raw syscall (Linux only, like the rest of the harness).
// The system call costs about a microsecond more than the vDSO; the workers
// stamp a few events per acquisition, so it does not matter.
func Mono() int64 {
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		panic("reliability: clock_gettime(CLOCK_MONOTONIC): " + errno.Error())
	}
	return ts.Nano()
}
