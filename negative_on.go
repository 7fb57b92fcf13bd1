//go:build zklock_negative

package zklock

import "os"

// Deliberately broken variants for the reliability suite's negative
// controls, selected with ZKLOCK_NEGATIVE in a build with the tag
// zklock_negative. Test-only: never ship such a build.
var (
	negTrustWatch  = os.Getenv("ZKLOCK_NEGATIVE") == "N2"
	negStringSort  = os.Getenv("ZKLOCK_NEGATIVE") == "N4"
	negNoNodeWatch = os.Getenv("ZKLOCK_NEGATIVE") == "N5" || os.Getenv("ZKLOCK_NEGATIVE") == "N9"
	negNoSync      = os.Getenv("ZKLOCK_NEGATIVE") == "N6"
	negWaitOwn     = os.Getenv("ZKLOCK_NEGATIVE") == "N6"
	negUnchecked   = os.Getenv("ZKLOCK_NEGATIVE") == "N9"
)

// SetNegativeControl switches the library's negative-control hooks in the
// current process ("N2", "N4", "N5", "N6", "N9", or "" for none). It exists only
// in builds with the zklock_negative tag; call it before any session
// starts.
func SetNegativeControl(name string) {
	negTrustWatch = name == "N2"
	negStringSort = name == "N4"
	negNoNodeWatch = name == "N5" || name == "N9"
	negNoSync = name == "N6"
	negWaitOwn = name == "N6"
	negUnchecked = name == "N9"
}
