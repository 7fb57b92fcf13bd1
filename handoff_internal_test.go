package zklock

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A waiter that drops its registration after the node was released must
// not end a later waiter's registration on the same node (one that listed
// the queue before the delete committed).
func TestHandoffDropEndsOnlyItsOwnRegistration(t *testing.T) {
	var hs handoffs
	const p = "/locks/a/_c_x-lock-0000000001"
	first := hs.await(p)
	hs.release(p)
	require.True(t, first.handedOff())

	later := hs.await(p)
	hs.drop(p, first)
	require.True(t, hs.any(), "the later registration survives the first one's drop")
	hs.release(p)
	require.True(t, later.handedOff())

	again := hs.await(p)
	other := hs.await(p)
	require.Same(t, again, other, "waiters on one node share its registration")
	hs.drop(p, again)
	require.True(t, hs.any())
	hs.drop(p, other)
	require.False(t, hs.any(), "the last drop ends the registration")
}
