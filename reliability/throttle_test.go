package reliability

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestC1ToleratesThrottledHolderLikeAPause: a holder throttled in bursts is
// judged as a paused one (its hold must end within PauseGrace of the
// burst's end); the same overlap without the burst, or ending later, is a
// violation.
func TestC1ToleratesThrottledHolderLikeAPause(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 3000, 100).acq("w2", 1, 5, 2500, 2600, 200).fault(FaultThrottleClient, "w1", 100, 2900)
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
	require.Empty(t, CheckTokens(Analyze(*h)))

	h = &hist{}
	h.acq("w1", 1, 0, 10, 3000, 100).acq("w2", 1, 5, 2500, 2600, 200).fault(FaultThrottleClient, "w3", 100, 2900)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1") // another process was throttled

	h = &hist{}
	h.acq("w1", 1, 0, 10, 9000, 100).acq("w2", 1, 5, 2500, 2600, 200).fault(FaultThrottleClient, "w1", 100, 2900)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1") // ended 6.1 s after the burst: beyond PauseGrace

	// C6's resume bound is for single stops longer than the loss limit.
	h = &hist{}
	h.acq("w1", 1, 0, 10, 9000, 100).fault(FaultThrottleClient, "w1", 100, 2900)
	require.Empty(t, CheckResumeTiming(Analyze(*h), CheckConfig{Resume: 1e9, LossLimit: 1e9, Session: 2e9}))
}
