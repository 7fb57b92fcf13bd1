package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
	"github.com/zklock/zklock/zktest"
)

func pipeSession(t *testing.T, c *zktest.Cluster, d zk.Dialer) *Session {
	t.Helper()
	s, err := Connect(c.Servers(), WithDialer(d), WithSessionTimeout(2*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.Eventually(t, func() bool { return s.State() == StateConnected }, 20*time.Second, 5*time.Millisecond)
	return s
}

// replyDelay holds every reply in the proxy: a listing sent before its
// create's reply is then seen by the proxy before that reply, which it
// could not be if the client waited for the reply.
const replyDelay = 5 * time.Millisecond

// summarise reads a proxy's exchange log: for every create request,
// whether a getChildren2 request of the same connection was forwarded
// before the create's reply (pipelined), and how many listings were sent
// once a create's reply was back, not behind it (own).
type pipelining struct {
	creates, pipelined, own, listings int
}

func summarise(log []zktest.Exchange) pipelining {
	var r pipelining
	open := map[int]bool{}   // conn -> a create is unanswered
	behind := map[int]bool{} // conn -> a listing was sent behind that create
	for _, x := range log {
		switch {
		case x.Op == wire.OpCreate && !x.Reply: // a lock node's create (parents are containers)
			r.creates++
			open[x.Conn], behind[x.Conn] = true, false
		case x.Op == wire.OpCreate:
			open[x.Conn] = false
		case x.Op == wire.OpGetChildren2 && !x.Reply: // go-zookeeper's Children
			r.listings++
			if open[x.Conn] && !behind[x.Conn] {
				behind[x.Conn] = true
				r.pipelined++
			} else {
				r.own++
			}
		}
	}
	return r
}

// requests returns the proxy's request counts, pings and handshakes aside.
func requests(p *zktest.Proxy) map[int32]int {
	r := p.Requests()
	for op := range r {
		if op == wire.OpPing || op < 0 {
			delete(r, op)
		}
	}
	return r
}

// persistent creates p and its parents as persistent nodes, so the server
// does not reap the lock directory as an empty container between cycles.
func persistent(t *testing.T, s *Session, p string) {
	t.Helper()
	if p == "/" {
		return
	}
	persistent(t, s, path.Dir(p))
	_, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll))
	if !errors.Is(err, zk.ErrNodeExists) {
		require.NoError(t, err)
	}
}

func lockRelease(t *testing.T, m *Mutex, try bool) {
	t.Helper()
	var h *Hold
	var err error
	if try {
		h, err = m.TryLock(context.Background())
	} else {
		h, err = m.Lock(context.Background())
	}
	require.NoError(t, err)
	require.NoError(t, h.Release())
}

// An uncontended Lock decides on the listing pipelined behind its create and
// sends no listing of its own: four requests per cycle (create,
// getChildren, the holder's watch on its node, delete) in two round trips.
// TryLock's probe listing comes on top.
func TestIntegration_PipelinedListingUncontended(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	persistent(t, s, "/locks/pipe")
	m, err := NewMutex(s, "/locks/pipe")
	require.NoError(t, err)
	lockRelease(t, m, false)

	px.SetDelay(0, replyDelay)
	px.ResetCounts()
	const n = 20
	for range n {
		lockRelease(t, m, false)
	}
	got := summarise(px.Exchanges())
	reqs := requests(px)
	t.Logf("%+v; requests %v", got, reqs)
	require.Equal(t, pipelining{creates: n, pipelined: n, listings: n}, got,
		"every listing is sent behind its create, before the create's reply is back, and none other")

	px.ResetCounts()
	lockRelease(t, m, true)
	require.Equal(t, pipelining{creates: 1, pipelined: 1, own: 1, listings: 2}, summarise(px.Exchanges()),
		"TryLock: its probe listing, then the one behind its create")

	// The holder's watch on its own node (a getData) is sent in the
	// background, without waiting for its reply: a request more, no round
	// trip more; none at all for a hold released before it went out.
	require.LessOrEqual(t, reqs[wire.OpGetData], n)
	delete(reqs, wire.OpGetData)
	require.Equal(t, map[int32]int{wire.OpCreate: n, wire.OpGetChildren2: n, wire.OpDelete: n}, reqs)
}

// The first create in a directory that does not exist yet fails with
// NoNode: the listing pipelined behind it fails too and is dropped, the
// parents are created, and the listing behind the second create is used.
func TestIntegration_PipelinedListingAfterNoNode(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	px.SetDelay(0, replyDelay)
	px.ResetCounts()
	m, err := NewMutex(s, "/pipe/nonode/lock")
	require.NoError(t, err)
	h, err := m.Lock(context.Background())
	require.NoError(t, err)
	log := px.Exchanges()
	got := summarise(log)
	t.Logf("%+v; requests %v", got, requests(px))
	require.Equal(t, pipelining{creates: 2, pipelined: 2, listings: 2}, got,
		"one failed create and one that succeeded, each with its listing behind it; wait lists nothing itself")
	var listed []int32
	for _, x := range log {
		if x.Op == wire.OpGetChildren2 && x.Reply {
			listed = append(listed, x.Err)
		}
	}
	require.Equal(t, []int32{-101, 0}, listed, "the listing behind the failed create fails (NoNode); the second is answered")

	kids, _, err := s.Conn().Children("/pipe/nonode/lock")
	require.NoError(t, err)
	require.Equal(t, []string{path.Base(h.Node())}, kids)
	require.NoError(t, h.Release())
}

// A create whose reply is lost is ambiguous: its pipelined listing is
// dropped with the connection, the node is found and adopted on the next
// connection, and wait lists for itself there.
func TestIntegration_PipelinedListingAmbiguousCreate(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	persistent(t, s, "/locks/pipe-ambiguous")
	m, err := NewMutex(s, "/locks/pipe-ambiguous")
	require.NoError(t, err)

	px.ResetCounts()
	px.DropNextCreateReply()
	h, err := m.Lock(context.Background())
	require.NoError(t, err)
	log := px.Exchanges()
	t.Logf("exchanges %+v", log)
	first := log[0].Conn
	later := summarise(slices.DeleteFunc(slices.Clone(log), func(x zktest.Exchange) bool { return x.Conn == first }))
	require.Equal(t, 1, summarise(log).creates, "one create only: the node of the lost reply is adopted")
	require.Zero(t, later.pipelined)
	require.GreaterOrEqual(t, later.own, 2, "on the new connection: the listing that finds the node, then wait's own")

	kids, _, err := s.Conn().Children("/locks/pipe-ambiguous")
	require.NoError(t, err)
	require.Equal(t, []string{path.Base(h.Node())}, kids, "the node of the lost reply is adopted, no second node")
	_, stat, err := s.Conn().Exists(h.Node())
	require.NoError(t, err)
	require.Equal(t, stat.Czxid, h.Token())
	require.NoError(t, h.Release())
}

// Contended, across sessions: a waiter decides to wait on its pipelined
// listing; when the waiter ahead of it gives up, it lists again, and when
// the holder releases it takes the lock. Each session has its own proxy, so
// that its requests are counted apart.
func TestIntegration_PipelinedListingContended(t *testing.T) {
	c := zktest.Start(t)
	const p = "/locks/pipe-contended"
	session := func() (*Mutex, *Session, *zktest.Proxy) {
		px := c.Proxy(t)
		s := pipeSession(t, c, px.Dialer())
		m, err := NewMutex(s, p)
		require.NoError(t, err)
		return m, s, px
	}
	a, _, _ := session()
	b, _, pb := session()
	mc, sc, pc := session()
	listings := func(px *zktest.Proxy) pipelining { return summarise(px.Exchanges()) }

	ha, err := a.Lock(context.Background())
	require.NoError(t, err)
	type result struct {
		h   *Hold
		err error
	}
	ctxB, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	rb, rc := make(chan result, 1), make(chan result, 1)
	go func() { h, err := b.Lock(ctxB); rb <- result{h, err} }()
	watches := func(n int) func() bool {
		return func() bool {
			out, err := c.FourLetter(0, "wchs")
			return err == nil && strings.Contains(out, fmt.Sprintf("Total watches:%d\n", n))
		}
	}
	// a watches its own node; b (another session) watches it too.
	require.Eventually(t, watches(2), time.Minute, 5*time.Millisecond, "b watches a")
	go func() { h, err := mc.Lock(context.Background()); rc <- result{h, err} }()
	require.Eventually(t, watches(3), time.Minute, 5*time.Millisecond, "c watches b")
	require.Equal(t, 1, listings(pb).listings, "b decided to wait on the listing behind its create")
	require.Equal(t, 1, listings(pc).listings)

	cancelB()
	r := <-rb
	require.ErrorIs(t, r.err, context.Canceled)
	require.Eventually(t, func() bool { return listings(pc).own == 1 }, time.Minute, 5*time.Millisecond, "c lists again when b goes")
	select {
	case r := <-rc:
		t.Fatalf("c acquired while a holds: %v, %v", r.h, r.err)
	default:
	}
	require.NoError(t, ha.Release())
	r = <-rc
	require.NoError(t, r.err)
	kids, _, err := sc.Conn().Children(p)
	require.NoError(t, err)
	require.Equal(t, []string{path.Base(r.h.Node())}, kids)
	require.Equal(t, 1, listings(pb).listings, "b never listed again")
	require.NoError(t, r.h.Release())
}

// The pipelined listing never holds an acquisition past its context: on a
// partitioned connection, Lock returns at its deadline although both the
// create and the listing behind it are unanswered, and once the partition
// heals the node created late is deleted.
func TestIntegration_PipelinedListingBoundedByContext(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	const dir = "/locks/pipe-partitioned"
	persistent(t, s, dir)
	m, err := NewMutex(s, dir)
	require.NoError(t, err)

	px.ResetCounts()
	px.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = m.Lock(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, took, time.Second, "Lock outlived its deadline (the session would only notice the partition after 2/3 of its timeout)")

	px.Heal()
	require.Eventually(t, func() bool {
		kids, _, err := s.Conn().Children(dir)
		return err == nil && len(kids) == 0
	}, 30*time.Second, 10*time.Millisecond, "the node created after the deadline is deleted")
	got := summarise(px.Exchanges())
	t.Logf("%+v", got)
	require.Equal(t, 1, got.creates)
	require.Equal(t, 1, got.pipelined, "the listing was sent behind the create, while it was unanswered")
}
