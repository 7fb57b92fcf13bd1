package zklock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// digestOnly is an ACL only alice (digest) may use: no other session may
// read the node, nor, since ZooKeeper 3.8.4 (ZOOKEEPER-2590), ask whether
// it exists.
const digestOnly = "digest:alice:secret:rwcda"

// lockedDown has kazoo make the world-readable directories of dirs, in
// order, and in the last one queue an ephemeral sequential node named
// name+"<seq>" that only alice may read; it returns the node's path.
func lockedDown(t *testing.T, kz *peers.Peer, name string, dirs ...string) string {
	t.Helper()
	for _, d := range dirs {
		if _, err := kz.Do("create " + d + " persistent"); err != nil && !strings.Contains(err.Error(), "NodeExists") {
			require.NoError(t, err)
		}
	}
	t.Cleanup(func() { // kazoo's session ends with the test; the directories are removed by their owner
		for i := len(dirs) - 1; i >= 0; i-- {
			_, _ = kz.Do("delete " + dirs[i])
		}
	})
	return kz.Must(t, "create "+dirs[len(dirs)-1]+"/"+name+" ephseq "+digestOnly)
}

// A waiter behind a node it may not read ends at once with
// ErrNotAuthorized, naming the node and the permission, after a few
// requests, whatever the recipe: it used to list and read again in a
// tight loop until its context ended.
func TestIntegration_WaiterBehindUnreadableNode(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	kz := peers.Kazoo(t, c.ConnectString(), 10*time.Second)
	s := connect(t, c)
	ps, err := zklock.Connect(c.Servers(), zklock.WithDialer(px.Dialer()), zklock.WithSessionTimeout(10*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ps.Close() })
	require.NoError(t, ps.WaitConnected(ctxTimeout(t, 20*time.Second)))

	const uuid = "_c_5d1e0c4a-7b1f-4c2e-9a0b-3c6f1e2d4a5b-"
	cases := []struct {
		name    string
		ahead   string   // the unreadable node's name, before its sequence number
		dirs    []string // the directories kazoo makes, the node's last
		acquire func(s *zklock.Session, path string) (*zklock.Hold, error)
	}{
		{"mutex", uuid + "lock-", nil, func(s *zklock.Session, p string) (*zklock.Hold, error) {
			m, err := zklock.NewMutex(s, p)
			require.NoError(t, err)
			return m.Lock(ctxTimeout(t, 8*time.Second))
		}},
		{"read", uuid + "__WRIT__", nil, func(s *zklock.Session, p string) (*zklock.Hold, error) {
			rw, err := zklock.NewRWLock(s, p)
			require.NoError(t, err)
			return rw.ReadLock().Lock(ctxTimeout(t, 8*time.Second))
		}},
		{"write", uuid + "__READ__", nil, func(s *zklock.Session, p string) (*zklock.Hold, error) {
			rw, err := zklock.NewRWLock(s, p)
			require.NoError(t, err)
			return rw.WriteLock().Lock(ctxTimeout(t, 8*time.Second))
		}},
		{"semaphore", uuid + "lock-", []string{"locks"}, func(s *zklock.Session, p string) (*zklock.Hold, error) {
			sem, err := zklock.NewSemaphore(s, p, 1)
			require.NoError(t, err)
			return sem.Acquire(ctxTimeout(t, 8*time.Second))
		}},
		{"election", uuid + "lock-", nil, func(s *zklock.Session, p string) (*zklock.Hold, error) {
			e, err := zklock.NewLeaderElection(s, p, "me")
			require.NoError(t, err)
			return e.Campaign(ctxTimeout(t, 8*time.Second))
		}},
		{"latch", uuid + "latch-", nil, func(s *zklock.Session, p string) (*zklock.Hold, error) {
			l, err := zklock.NewLeaderLatch(s, p, "me")
			require.NoError(t, err)
			require.NoError(t, l.Start(context.Background()))
			t.Cleanup(func() { _ = l.Close() })
			return l.Await(ctxTimeout(t, 8*time.Second))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := "/locks/prot-" + tc.name
			dirs := []string{"/locks", dir}
			for _, d := range tc.dirs {
				dirs = append(dirs, dir+"/"+d)
			}
			node := lockedDown(t, kz, tc.ahead, dirs...)
			px.ResetCounts()
			start := time.Now()
			h, err := tc.acquire(ps, dir)
			took := time.Since(start)
			total := 0
			for _, n := range px.Requests() {
				total += n
			}
			t.Logf("%s: %v after %v and %d requests (%v)", tc.name, err, took, total, px.Requests())
			require.Nil(t, h)
			require.ErrorIs(t, err, zklock.ErrNotAuthorized)
			require.ErrorIs(t, err, zklock.ErrRefused)
			require.ErrorIs(t, err, zk.ErrNoAuth)
			require.NotErrorIs(t, err, zklock.ErrUnreachable)
			require.ErrorContains(t, err, node)
			require.ErrorContains(t, err, "READ")
			require.Less(t, took, 2*time.Second)
			require.Less(t, total, 20, "requests sent by the waiter")
			require.Eventually(t, func() bool { // our node went with the failure
				cs, _, err := s.Conn().Children(node[:strings.LastIndex(node, "/")])
				return err == nil && len(cs) == 1
			}, 10*time.Second, 10*time.Millisecond)
		})
	}
}

// The observers and Participants report an unreadable node instead of
// retrying for ever or failing whole.
func TestIntegration_ObserversOnUnreadableNode(t *testing.T) {
	c := zktest.Start(t)
	kz := peers.Kazoo(t, c.ConnectString(), 10*time.Second)
	s := connect(t, c)
	node := lockedDown(t, kz, "_c_5d1e0c4a-7b1f-4c2e-9a0b-3c6f1e2d4a5b-lock-", "/locks", "/locks/unread")
	m := newMutex(t, s, "/locks/unread")
	try, err := m.TryLock(ctxTimeout(t, 10*time.Second))
	require.ErrorIs(t, err, zklock.ErrLocked, "the try sees the node ahead without reading it")
	require.Nil(t, try)

	ps, err := zklock.Participants(ctxTimeout(t, 10*time.Second), s, "/locks/unread")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.ErrorIs(t, ps[0].Err, zklock.ErrNotAuthorized)
	require.ErrorContains(t, ps[0].Err, node)
	require.True(t, ps[0].Holds)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	ch, err := zklock.ObserveLeader(ctx, s, "/locks/unread")
	require.NoError(t, err)
	var last zklock.Participant
	for p := range ch {
		last = p
	}
	require.NoError(t, ctx.Err(), "the observation ended on its own")
	require.ErrorIs(t, last.Err, zklock.ErrNotAuthorized)
	require.ErrorContains(t, last.Err, node)
}
