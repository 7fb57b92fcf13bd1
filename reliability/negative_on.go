//go:build zklock_negative

package reliability

import "github.com/zklock/zklock"

// NegativeBuild reports whether the negative controls are compiled in. With
// the tag zklock_negative, workers accept -negative N1 (no fencing) and N3
// (ignore disconnection), and the library reads ZKLOCK_NEGATIVE for N2, N4,
// N5 and N6 (see the root package's negative_on.go). Never ship such a
// build.
const NegativeBuild = true

// setNegative switches the library's hooks in this process, for in-process
// scenarios.
func setNegative(name string) { zklock.SetNegativeControl(name) }
