//go:build !zklock_negative

package zklock

// Test-only hooks for the reliability suite's negative controls (see
// reliability/ and negative_on.go). In every normal build they are false
// constants and the compiler removes the code they guard.
const (
	// negTrustWatch (N2): take the lock when the watched predecessor is
	// deleted even where that is unsound, without listing again.
	negTrustWatch = false
	// negStringSort (N4): order contenders by their names as strings
	// instead of by sequence number.
	negStringSort = false
	// negNoNodeWatch (N5): holders do not watch their own node, so a
	// deletion by another client goes unnoticed while connected.
	negNoNodeWatch = false
	// negNoSync and negWaitOwn (N6): search for the node of an ambiguous
	// create without a sync first, and wait on a node of our own
	// acquisition queued ahead of ours as on anyone's.
	negNoSync  = false
	negWaitOwn = false
	// negUnchecked (N9, with negNoNodeWatch): a schedule claims its ticks
	// without the check of the leader's node (schedule_zk.go), so a leader
	// whose node was deleted, and who did not notice, claims.
	negUnchecked = false
)
