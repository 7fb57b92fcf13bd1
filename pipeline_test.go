package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// ZooKeeper opcodes, as zktest's proxy counts them.
const (
	pipeOpCreate       = 1
	pipeOpDelete       = 2
	pipeOpGetData      = 4
	pipeOpPing         = 11
	pipeOpGetChildren2 = 12 // go-zookeeper's Children
)

func pipeSession(t *testing.T, c *zktest.Cluster, d zk.Dialer) *Session {
	t.Helper()
	s, err := Connect(c.Servers(), WithDialer(d), WithSessionTimeout(2*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.Eventually(t, func() bool { return s.State() == StateConnected }, 20*time.Second, 5*time.Millisecond)
	return s
}

// probed returns a mutex whose queue counts what its pipelined listings do.
func probed(t *testing.T, s *Session, p string) (*Mutex, *pipeProbe) {
	t.Helper()
	m, err := NewMutex(s, p)
	require.NoError(t, err)
	m.q.pipeProbe = &pipeProbe{}
	return m, m.q.pipeProbe
}

type probeCounts struct{ sent, early, used, missed, failed, listed int64 }

func (p *pipeProbe) counts() probeCounts {
	return probeCounts{p.sent.Load(), p.early.Load(), p.used.Load(), p.missed.Load(), p.failed.Load(), p.listed.Load()}
}

// requests returns the proxy's request counts, pings and handshakes aside.
func requests(p *zktest.Proxy) map[int32]int {
	r := p.Requests()
	for op := range r {
		if op == pipeOpPing || op < 0 {
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
// getChildren, the holder's watch on its node, delete) in two round trips. TryLock's probe listing comes
// on top, as before.
func TestIntegration_PipelinedListingUncontended(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	persistent(t, s, "/locks/pipe")
	m, probe := probed(t, s, "/locks/pipe")
	lockRelease(t, m, false)

	px.ResetCounts()
	before := probe.counts()
	const n = 20
	for range n {
		lockRelease(t, m, false)
	}
	lockRelease(t, m, true)
	got := probe.counts()
	t.Logf("probe before %+v, after %+v; requests %v", before, got, requests(px))

	require.Equal(t, int64(n+1), got.used-before.used, "every acquisition decides on its pipelined listing")
	require.Equal(t, int64(n+1), got.sent-before.sent)
	require.Zero(t, got.listed-before.listed, "no acquisition sends a listing of its own")
	require.Zero(t, got.missed-before.missed)
	require.Zero(t, got.failed-before.failed)
	require.Positive(t, got.early-before.early, "the listing is never sent before the create's reply is back: not pipelined")
	// The holder's watch on its own node (a getData) is sent in the
	// background, without waiting for its reply: a request more, no round
	// trip more; none at all for a hold released before it went out.
	got2 := requests(px)
	require.LessOrEqual(t, got2[pipeOpGetData], n+1)
	delete(got2, pipeOpGetData)
	require.Equal(t, map[int32]int{pipeOpCreate: n + 1, pipeOpGetChildren2: n + 2, pipeOpDelete: n + 1}, got2)
}

// The first create in a directory that does not exist yet fails with
// NoNode: the listing pipelined behind it is dropped, the parents are
// created, and the listing behind the second create is used.
func TestIntegration_PipelinedListingAfterNoNode(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	px.ResetCounts()
	m, probe := probed(t, s, "/pipe/nonode/lock")
	h, err := m.Lock(context.Background())
	require.NoError(t, err)
	got := probe.counts()
	reqs := requests(px)
	t.Logf("probe %+v; requests %v", got, reqs)
	require.Equal(t, int64(1), got.failed, "the listing behind the failed create is dropped")
	require.Equal(t, int64(1), got.used)
	require.Zero(t, got.listed)
	require.Zero(t, got.missed)
	require.Equal(t, 2, reqs[pipeOpCreate], "one failed create, one that succeeded")
	require.Equal(t, int(got.sent+got.listed), reqs[pipeOpGetChildren2], "every listing is a pipelined one")

	kids, _, err := s.Conn().Children("/pipe/nonode/lock")
	require.NoError(t, err)
	require.Equal(t, []string{path.Base(h.Node())}, kids)
	require.NoError(t, h.Release())
}

// A create whose reply is lost is ambiguous: its pipelined listing is
// dropped, the node is found and adopted, and wait lists for itself.
func TestIntegration_PipelinedListingAmbiguousCreate(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := pipeSession(t, c, px.Dialer())
	persistent(t, s, "/locks/pipe-ambiguous")
	m, probe := probed(t, s, "/locks/pipe-ambiguous")
	before := probe.counts()

	px.DropNextCreateReply()
	h, err := m.Lock(context.Background())
	require.NoError(t, err)
	got := probe.counts()
	t.Logf("probe before %+v, after %+v", before, got)
	require.Equal(t, int64(1), got.failed-before.failed, "the listing behind the ambiguous create is dropped")
	require.Zero(t, got.used-before.used)
	require.Positive(t, got.listed-before.listed, "the adopted node's queue is listed by wait")

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
// the holder releases it takes the lock.
func TestIntegration_PipelinedListingContended(t *testing.T) {
	c := zktest.Start(t)
	const p = "/locks/pipe-contended"
	a, _ := probed(t, pipeSession(t, c, c.Dialer()), p)
	b, pb := probed(t, pipeSession(t, c, c.Dialer()), p)
	sc := pipeSession(t, c, c.Dialer())
	mc, pc := probed(t, sc, p)

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
	require.Equal(t, int64(1), pb.used.Load(), "b decided to wait on its pipelined listing")
	require.Equal(t, int64(1), pc.used.Load())

	cancelB()
	r := <-rb
	require.ErrorIs(t, r.err, context.Canceled)
	require.Eventually(t, func() bool { return pc.listed.Load() == 1 }, time.Minute, 5*time.Millisecond, "c lists again when b goes")
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
	require.Zero(t, pb.listed.Load())
	require.Zero(t, pb.missed.Load()+pc.missed.Load())
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
	m, probe := probed(t, s, dir)

	px.Blackhole()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Lock(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, took, time.Second, "Lock outlived its deadline (the session would only notice the partition after 2/3 of its timeout)")
	require.Equal(t, int64(1), probe.sent.Load(), "the listing was sent behind the create")
	require.Equal(t, int64(1), probe.failed.Load())
	require.Zero(t, probe.used.Load()+probe.listed.Load())

	px.Heal()
	require.Eventually(t, func() bool {
		kids, _, err := s.Conn().Children(dir)
		return err == nil && len(kids) == 0
	}, 30*time.Second, 10*time.Millisecond, "the node created after the deadline is deleted")
}
