package main

import (
	"syscall"
	"unsafe"
)

// mono is CLOCK_MONOTONIC in nanoseconds, the clock every process of the
// machine shares (Go's own monotonic readings are relative to the process
// start and cannot be compared across processes).
func mono() int64 {
	var ts syscall.Timespec
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0) // 1: CLOCK_MONOTONIC
	return ts.Nano()
}
