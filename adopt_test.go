package zklock

import (
	"context"
	"path"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// Two nodes of one acquisition (our session, our protected prefix) with
// another session's node between them, as when the search after a lost
// create reply missed the first node and the next create queued behind it
// (TestIntegration_AmbiguousCreateOnLaggingFollower shows how): the wait
// adopts the first, deletes the second and holds, with the first node's
// czxid as its token. It never waits on the first, nor on the node between
// (which itself waits on the first), nor, for a semaphore of two leases,
// counts the second as a lease taken.
func TestIntegration_OwnNodeAheadIsAdopted(t *testing.T) {
	c := zktest.Start(t)
	s := pipeSession(t, c, c.Dialer())
	other := pipeSession(t, c, c.Dialer())
	mutex, err := NewMutex(s, "/locks/own-ahead")
	require.NoError(t, err)
	sem, err := NewSemaphore(s, "/locks/own-ahead-sem", 2)
	require.NoError(t, err)
	for _, q := range []*queue{&mutex.q, &sem.lease} {
		t.Run(q.mark, func(t *testing.T) {
			persistent(t, s, q.dir)
			node := func(s *Session, prefix string) string {
				t.Helper()
				p, err := s.Conn().Create(q.dir+"/"+prefix+q.mark, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
				require.NoError(t, err)
				return p
			}
			prefix := protectedPrefix()
			first := node(s, prefix)
			between := node(other, protectedPrefix())
			second := node(s, prefix)
			_, stat, err := s.Conn().Exists(second)
			require.NoError(t, err)

			// acquire (watcher.go), from the second node on, as create returned it.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			w := &waiter{q: q, ctx: ctx, start: time.Now(), next: stepList, stepped: make(chan struct{}, 1),
				e: newEntry(q.dir, path.Base(second), s.ID(), stat)}
			h, err := w.wait()
			require.NoError(t, err, "the wait waited on our own node")
			require.Equal(t, first, h.Node(), "the earlier node keeps our place")
			_, fstat, err := s.Conn().Exists(first)
			require.NoError(t, err)
			require.Equal(t, fstat.Czxid, h.Token())
			kids, _, err := s.Conn().Children(q.dir)
			require.NoError(t, err)
			require.ElementsMatch(t, []string{path.Base(first), path.Base(between)}, kids, "the second node is deleted")
			require.NoError(t, h.Release())
		})
	}
}

// The search after a lost create reply adopts the earliest node of ours
// with the prefix and deletes the later ones, whatever order the listing
// gives them in.
func TestIntegration_FindAdoptsTheEarliest(t *testing.T) {
	c := zktest.Start(t)
	s := pipeSession(t, c, c.Dialer())
	m, err := NewMutex(s, "/locks/find-earliest")
	require.NoError(t, err)
	q := &m.q
	persistent(t, s, q.dir)
	prefix := protectedPrefix()
	var nodes []string
	for range 3 {
		p, err := s.Conn().Create(q.dir+"/"+prefix+q.mark, nil, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		nodes = append(nodes, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := q.find(ctx, prefix, s.ID())
	require.NoError(t, err)
	require.NotNil(t, e)
	require.Equal(t, nodes[0], e.node)
	require.Eventually(t, func() bool {
		kids, _, err := s.Conn().Children(q.dir)
		return err == nil && len(kids) == 1 && kids[0] == path.Base(nodes[0])
	}, 10*time.Second, 10*time.Millisecond, "the later nodes are deleted")
	require.NoError(t, s.Conn().Delete(nodes[0], -1))
}
