//go:build !zklock_negative

package zklock

// Test-only hooks for the reliability suite's negative controls N2–N9
// (docs/reliability.md, negative_on.go): false constants in every normal
// build, so the compiler removes the code they guard.
const (
	negTrustWatch  = false // N2: take the lock on a predecessor's deletion, not listing again
	negStringSort  = false // N4: order contenders by name as strings
	negNoNodeWatch = false // N5, N9: holders do not watch their own node
	negNoSync      = false // N6: no sync before the search for an ambiguous create
	negWaitOwn     = false // N6: wait on a node of our own acquisition as on anyone's
	negUnchecked   = false // N9: claim ticks without the check of the leader's node
)
