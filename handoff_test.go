package zklock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

const opPing = 11

// requestsPerHandoff queues n waiters on one lock, all in one session behind
// a counting proxy, and returns the ZooKeeper requests (pings aside) that
// each of k handoffs costs, release included.
func requestsPerHandoff(t *testing.T, c *zktest.Cluster, sessions, n, k int) float64 {
	p := c.Proxy(t)
	var ss []*zklock.Session
	for range sessions {
		ss = append(ss, connect(t, c, zklock.WithDialer(p.Dialer())))
	}
	path := fmt.Sprintf("/locks/herd-%d-%d", sessions, n)
	ctx, cancel := context.WithCancel(context.Background())
	acquired := make(chan *zklock.Hold, n+1)
	errs := make(chan error, n+1)
	for i := range n + 1 {
		m := newMutex(t, ss[i%sessions], path)
		go func() {
			h, err := m.Lock(ctx)
			if err != nil {
				errs <- err
				return
			}
			acquired <- h
		}()
		if sessions > 1 { // queue them in turn, so every handoff crosses sessions
			require.Eventually(t, func() bool {
				_, stat, err := ss[0].Conn().Exists(path)
				return err == nil && int(stat.NumChildren) == i+1
			}, time.Minute, time.Millisecond)
		}
	}
	defer func() {
		cancel()
		for range n - k { // every waiter that is left returns: cancelled, or acquired just before
			select {
			case <-errs:
			case h := <-acquired:
				_ = h.Release()
			case <-time.After(30 * time.Second):
				t.Error("a cancelled waiter did not return")
				return
			}
		}
	}()
	h := <-acquired
	// Every waiter is parked once the server holds one watch per waiter,
	// plus the holder's on its own node where no waiter of its session
	// provides it (ZooKeeper keeps one watch per session and path).
	watches := n
	if sessions > 1 {
		watches++
	}
	require.Eventually(t, func() bool {
		out, err := c.FourLetter(0, "wchs")
		return err == nil && strings.Contains(out, fmt.Sprintf("Total watches:%d\n", watches))
	}, time.Minute, 20*time.Millisecond)
	total := func() int {
		sum := 0
		for op, c := range p.Requests() {
			if op != opPing {
				sum += c
			}
		}
		return sum
	}
	before := total()
	for range k {
		require.NoError(t, h.Release())
		select {
		case h = <-acquired:
		case err := <-errs:
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatal("handoff stalled")
		}
	}
	perHandoff := float64(total()-before) / float64(k)
	t.Logf("%d waiters on %d session(s): requests by opcode during %d handoffs: %v", n, sessions, k, p.Requests())
	require.NoError(t, h.Release())
	return perHandoff
}

func TestIntegration_HandoffCostIsConstant(t *testing.T) {
	if testing.Short() {
		t.Skip("queues 1000 waiters")
	}
	c := zktest.Start(t)

	// Across sessions a handoff is the holder's delete plus, at most, one
	// listing by the next holder (none when it was already next in line
	// when it listed), and the next holder's watch on its own node (its
	// successor is in the other session, so it does not provide one).
	small := requestsPerHandoff(t, c, 2, 10, 8)
	large := requestsPerHandoff(t, c, 2, 1000, 8)
	t.Logf("across 2 sessions: %.2f requests per handoff at 10 waiters, %.2f at 1000", small, large)
	require.LessOrEqual(t, small, 3.0)
	require.LessOrEqual(t, large, 3.0, "a handoff must cost the same whatever the queue length")
	require.InDelta(t, small, large, 0.5)

	// Within one session the holder hands the lock to its successor
	// directly, and the successor's own successor already watches its node
	// for the session: the delete is the only request.
	small = requestsPerHandoff(t, c, 1, 10, 8)
	large = requestsPerHandoff(t, c, 1, 1000, 8)
	t.Logf("within one session: %.2f requests per handoff at 10 waiters, %.2f at 1000", small, large)
	require.Equal(t, 1.0, small)
	require.Equal(t, 1.0, large)
}
