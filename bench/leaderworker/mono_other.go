//go:build !linux

package main

import "time"

var epoch = time.Now()

// mono is a monotonic reading of this process only: the failover phase,
// which compares readings across processes, runs on Linux only.
func mono() int64 { return int64(time.Since(epoch)) }
