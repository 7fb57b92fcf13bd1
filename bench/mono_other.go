//go:build !linux

package bench

import "time"

// monoOK: no clock shared by processes here; the failover phase is skipped.
const monoOK = false

var monoEpoch = time.Now()

func mono() int64 { return int64(time.Since(monoEpoch)) }
