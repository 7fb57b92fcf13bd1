package zktest

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// A follower that falls behind by more than the leader's log can replay is
// sent a snapshot when it joins again (SNAP), which the quorum relay passes
// unheld, so SetLag refuses it; resync, as a start does, restarts it to
// sync by DIFF, after which SetLag holds it.
func TestIntegration_ResyncRestartsASnapshotFollower(t *testing.T) {
	c := StartEnsemble(t, WithQuorumRelay())
	lb := c.ctl.(*localBackend)
	leader, err := c.Leader()
	require.NoError(t, err)
	f := (leader + 1) % c.Size()
	require.False(t, lb.relays.unheld[f].Load(), "a fresh ensemble's follower is held")

	require.NoError(t, c.Stop(f))
	admin := c.ConnectTo(t, c.Servers()[leader:leader+1], 10*time.Second)
	for range 700 { // past the 500 proposals a leader keeps to replay
		_, err := admin.Create("/churn", nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		require.NoError(t, admin.Delete("/churn", -1))
	}
	require.NoError(t, c.Start(f))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, c.WaitServing(ctx))
	require.True(t, lb.relays.unheld[f].Load(), "the follower was sent a snapshot")
	require.Error(t, c.SetLag(f, time.Second))
	require.NoError(t, c.SetLag(f, 0))

	before := len(lb.restarted) // a start may already have restarted a member
	require.NoError(t, lb.resync(ctx, c))
	require.Equal(t, []int{f}, lb.restarted[before:])
	require.False(t, lb.relays.unheld[f].Load(), "restarted, the follower synced by DIFF")
	require.NoError(t, c.SetLag(f, time.Second))
	require.NoError(t, c.SetLag(f, 0))
}
