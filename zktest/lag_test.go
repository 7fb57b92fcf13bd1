package zktest_test

import (
	"fmt"
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
	// An attempt during which the ensemble changed under it (a new leader,
	// or the lagging member synced again, unheld until it is in sync), or
	// whose read came only after the lag had passed, shows nothing about
	// the lag: it is tried again, a bounded number of times. An attempt on
	// a steady ensemble must pass.
	const attempts = 3
	var changed []string
	for a := range attempts {
		why := lagAttempt(t, c, a)
		if why == "" {
			break
		}
		changed = append(changed, why)
		require.Less(t, a+1, attempts, "the ensemble changed during every attempt: %q", changed)
	}
	if len(changed) > 0 {
		t.Logf("attempts the ensemble changed under: %q", changed)
	}

	require.Error(t, c.SetLag(3, time.Second), "out of range")
	require.ErrorIs(t, zktest.Start(t).SetLag(0, time.Second), zktest.ErrUnsupported, "not started WithQuorumRelay")
}

// lagAttempt makes the member after the leader lag and checks what its
// clients see. It returns "" when every check held on a steady ensemble,
// or what changed under a check that failed; a check that fails on a
// steady ensemble fails the test.
func lagAttempt(t *testing.T, c *zktest.Cluster, a int) string {
	leader, err := c.Leader()
	require.NoError(t, err)
	lagging := (leader + 1) % c.Size()
	atLeader := c.ConnectTo(t, c.Servers()[leader:leader+1], 10*time.Second)
	root := testRoot(t, atLeader)

	// Made before the lag: creating a session is a write, whose reply a
	// lagging member sends only once it has caught up.
	behind := c.ConnectTo(t, c.Servers()[lagging:lagging+1], 10*time.Second)
	events := c.LagEvents(lagging)
	steady := func(failed string) string {
		now, err := c.Leader()
		switch {
		case err != nil || now != leader:
			return fmt.Sprintf("attempt %d: %s; the leader moved from %d (now %d, %v)", a, failed, leader, now, err)
		case c.LagEvents(lagging) != events:
			return fmt.Sprintf("attempt %d: %s; member %d synced with its leader again", a, failed, lagging)
		}
		t.Fatalf("attempt %d: %s, on a steady ensemble (leader %d, lagging %d)", a, failed, leader, lagging)
		return ""
	}

	const lag = 1500 * time.Millisecond
	require.NoError(t, c.SetLag(lagging, lag))
	defer func() { require.NoError(t, c.SetLag(lagging, 0)) }()
	node := root + "/n"
	_, err = atLeader.Create(node, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	created := time.Now()

	// Its pings pass: the session stays; its reads see the old state.
	ok, _, err := behind.Exists(node)
	require.NoError(t, err)
	if ok {
		if e := time.Since(created); e >= lag { // a stalled machine: the lag had passed
			return fmt.Sprintf("attempt %d: the read answered %v after the create, past the lag", a, e)
		}
		return steady("the lagging member already has the node")
	}

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
	if took := time.Since(start); took < lag/2 { // a lower bound: the commit is held
		return steady(fmt.Sprintf("a create through the lagging member took %v", took))
	}

	require.NoError(t, c.SetLag(lagging, 0))
	_, err = atLeader.Create(node+"3", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ok, _, err := behind.Exists(node + "3")
		return err == nil && ok
	}, 10*time.Second, 10*time.Millisecond)
	return ""
}
