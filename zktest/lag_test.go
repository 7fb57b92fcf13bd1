package zktest_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// A lagging follower serves a state older than its leader's, accepts
// sessions all the same, and catches up on a sync; once the lag ends it
// serves the leader's state again.
func TestIntegration_SetLag(t *testing.T) {
	c := track(zktest.StartEnsemble(t, zktest.WithQuorumRelay()))
	c.RequireFaults(t)
	leader, err := c.Leader()
	require.NoError(t, err)
	lagging := (leader + 1) % c.Size()
	atLeader := c.ConnectTo(t, c.Servers()[leader:leader+1], 10*time.Second)
	root := testRoot(t, atLeader)

	// Made before the lag: creating a session is a write, whose reply a
	// lagging member sends only once it has caught up.
	behind := c.ConnectTo(t, c.Servers()[lagging:lagging+1], 10*time.Second)

	const lag = 1500 * time.Millisecond
	require.NoError(t, c.SetLag(lagging, lag))
	node := root + "/n"
	_, err = atLeader.Create(node, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	created := time.Now()

	// Its pings pass: the session stays; its reads see the old state.
	ok, _, err := behind.Exists(node)
	require.NoError(t, err)
	require.False(t, ok, "the lagging member already has the node")

	_, err = behind.Sync(node)
	require.NoError(t, err)
	ok, _, err = behind.Exists(node)
	require.NoError(t, err)
	require.True(t, ok, "a sync through the lagging member waits for what it was sent")
	t.Logf("sync answered %v after the create (lag %v)", time.Since(created), lag)

	// Its sessions write through the leader: the reply waits for the lag.
	start := time.Now()
	_, err = behind.Create(node+"2", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), lag/2, "a lower bound: the commit is held")

	require.NoError(t, c.SetLag(lagging, 0))
	_, err = atLeader.Create(node+"3", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ok, _, err := behind.Exists(node + "3")
		return err == nil && ok
	}, 10*time.Second, 10*time.Millisecond)

	require.Error(t, c.SetLag(3, lag), "out of range")
	require.ErrorIs(t, zktest.Start(t).SetLag(0, lag), zktest.ErrUnsupported, "not started WithQuorumRelay")
}
