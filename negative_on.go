//go:build zklock_negative

package zklock

import "os"

// Deliberately broken variants for the reliability suite's negative
// controls, selected with ZKLOCK_NEGATIVE in a build with the tag
// zklock_negative. Test-only: never ship such a build.
var (
	negTrustWatch = os.Getenv("ZKLOCK_NEGATIVE") == "N2"
	negStringSort = os.Getenv("ZKLOCK_NEGATIVE") == "N4"
)
