package zklock_test

import (
	"fmt"
	"path"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/wire"
	"github.com/zklock/zklock/zktest"
)

// A create queued while the session is suspended is sent by go-zookeeper
// under the session the server grants next, once the old one has expired.
// The library deletes that node (it was made under a session it did not
// see it under) and creates again under a new protected prefix, so that no
// later search for an ambiguous attempt can adopt the node being deleted.
// The soak once found the same prefix reused: the search adopted the node,
// the cleaner's delete then ran under its new holder, and the next waiter
// held beside it (S22, C1).
func TestIntegration_CreateUnderUnseenSessionGetsNewPrefix(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	admin := c.Connect(t, 10*time.Second)
	for _, p := range []string{"/unseen", "/unseen/lock"} { // persistent: the first create needs no parents
		_, err := admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	px := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(px.Dialer()))
	old := s.ID()

	px.Blackhole()
	require.Eventually(t, func() bool { return s.State() == zklock.StateSuspended }, 20*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Expire(old))
	px.ResetCounts()

	type result struct {
		h   *zklock.Hold
		err error
	}
	done := make(chan result, 1)
	go func() {
		h, err := newMutex(t, s, "/unseen/lock").Lock(ctxTimeout(t, 30*time.Second))
		done <- result{h, err}
	}()
	// The create is queued in go-zookeeper (its caller waits for the
	// reply) before the partition heals.
	require.Eventually(t, createQueued, 10*time.Second, time.Millisecond)
	px.Heal()

	r := <-done
	require.NoError(t, r.err)
	t.Cleanup(func() { _ = r.h.Release() })
	require.NotEqual(t, old, s.ID(), "the session expired and was replaced")

	var names []string
	for _, x := range px.Exchanges() {
		if !x.Reply && wire.IsCreate(x.Op) && strings.HasPrefix(x.Path, "/unseen/lock/") {
			names = append(names, x.Path)
		}
	}
	require.Len(t, names, 2, "the create queued while suspended, then one under the new session: %q", names)
	first, second := names[0], names[1]
	require.NotEqual(t, prefixOf(t, first), prefixOf(t, second), "the second create reused the prefix of the node handed to the cleaner")
	require.True(t, strings.HasPrefix(r.h.Node(), second), "held %s, want the second create's node", r.h.Node())
	held := r.h.Node()[len("/unseen/lock/"):]
	require.Eventually(t, func() bool {
		cs := children(t, admin, "/unseen/lock")
		return len(cs) == 1 && cs[0] == held
	}, 10*time.Second, 5*time.Millisecond, "the node made under the unseen session is deleted, the held one kept")
	require.NoError(t, r.h.Err())
}

// prefixOf returns the "_c_<uuid>-" part of a protected node's name.
func prefixOf(t *testing.T, node string) string {
	t.Helper()
	const n = len("_c_") + 36 + 1
	name := node[strings.LastIndexByte(node, '/')+1:]
	require.True(t, len(name) > n && strings.HasPrefix(name, "_c_"), "%s: not a protected name", node)
	return name[:n]
}

// createQueued reports whether some goroutine waits in go-zookeeper's
// Create for its reply, having queued the request (a goroutine still
// queueing it waits in queueRequest instead).
func createQueued() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		frames := strings.SplitN(g, "\n", 3)
		if len(frames) == 3 && strings.HasPrefix(frames[1], "github.com/go-zookeeper/zk.(*Conn).request(") &&
			strings.Contains(frames[2], "github.com/go-zookeeper/zk.(*Conn).Create(") {
			return true
		}
	}
	return false
}

// After a create whose reply was lost, the session reconnects to a
// follower that has not yet applied the create (apache/curator#784,
// CURATOR-264): the client never saw the create's zxid, so the follower
// accepts the session, and a listing there lacks the node. The search
// syncs the follower first, finds the node and adopts it: one create, one
// node, and the lock is taken, not waited for on our own node.
func TestIntegration_AmbiguousCreateOnLaggingFollower(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, zktest.WithQuorumRelay())
	c.RequireFaults(t)
	leader, err := c.Leader()
	require.NoError(t, err)
	lagging := (leader + 1) % c.Size()
	admin := c.ConnectTo(t, c.Servers()[leader:leader+1], 10*time.Second)
	for _, p := range []string{"/lagged", "/lagged/lock"} { // persistent: the create needs no parents
		_, err := admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	px := c.Proxy(t)
	px.Refuse(lagging) // the session starts elsewhere
	// The session's pings at the lagging member queue behind its sync and
	// its writes, so the lag must stay below go-zookeeper's read timeout
	// (two thirds of the session timeout), or the connection flaps.
	s := connect(t, c, zklock.WithDialer(px.Dialer()), zklock.WithSessionTimeout(6*time.Second))
	px.Heal()

	const lag = time.Second
	require.NoError(t, c.SetLag(lagging, lag))
	var others []int
	for i := range c.Size() {
		if i != lagging {
			others = append(others, i)
		}
	}
	px.Refuse(others...) // the session's next connection is to the lagging member
	px.ResetCounts()
	px.DropNextCreateReply()
	h, err := newMutex(t, s, "/lagged/lock").Lock(ctxTimeout(t, 4*lag))
	require.NoError(t, err, "the waiter waited on its own node")
	t.Cleanup(func() { _ = h.Release() })

	cons, err := c.FourLetter(lagging, "cons")
	require.NoError(t, err)
	require.Contains(t, cons, fmt.Sprintf("sid=%#x", s.ID()), "the session moved to the lagging member")
	var creates []string
	for _, x := range px.Exchanges() {
		if !x.Reply && wire.IsCreate(x.Op) && strings.HasPrefix(x.Path, "/lagged/lock/") {
			creates = append(creates, x.Path)
		}
	}
	require.Len(t, creates, 1, "a second create: the search missed the node of the first (%q)", creates)
	require.True(t, strings.HasPrefix(h.Node(), creates[0]), "held %s, want the node of the lost reply", h.Node())
	require.Equal(t, []string{path.Base(h.Node())}, children(t, admin, "/lagged/lock"), "exactly the held node")
	_, stat, err := admin.Exists(h.Node())
	require.NoError(t, err)
	require.Equal(t, stat.Czxid, h.Token())
}

// A create that the server applies but whose reply is lost, and whose
// session then expires before the client reconnects (reliability S9, under
// load: the expiry's reconnect closed the connection between the create's
// commit and its reply). The node was queued, other contenders saw it, and
// it went with the session: the acquire ends with ErrSessionExpired, as a
// waiter's does, instead of queueing again under the next session and
// waiting there, unseen by whoever expired the session.
func TestIntegration_AmbiguousCreateInExpiredSessionFails(t *testing.T) {
	c := zktest.Start(t)
	holder := connect(t, c)
	h, err := newMutex(t, holder, "/ambexp").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Release() })

	px := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(px.Dialer()))
	old := s.ID()
	px.DropNextCreateReply() // the directory exists: the next create is the node's
	done := make(chan error, 1)
	go func() {
		h, err := newMutex(t, s, "/ambexp").Lock(ctxTimeout(t, 15*time.Second))
		if err == nil {
			_ = h.Release()
		}
		done <- err
	}()
	// go-zookeeper waits a second before it reconnects to a lone server:
	// the node is applied, the connection closed, and the session expires
	// within that second.
	require.Eventually(t, func() bool { return len(children(t, holder.Conn(), "/ambexp")) == 2 }, 10*time.Second, time.Millisecond)
	require.NoError(t, c.Expire(old))

	select {
	case err := <-done:
		require.ErrorIs(t, err, zklock.ErrSessionExpired)
	case <-time.After(20 * time.Second):
		t.Fatal("Lock did not return")
	}
	require.Eventually(t, func() bool { return len(children(t, holder.Conn(), "/ambexp")) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NotEqual(t, old, s.ID(), "the session was replaced")
}
