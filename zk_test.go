package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// The tests that wait on their own servers more than they compute call
// t.Parallel; those that measure memory, allocations, time or request
// counts, or share package state, do not, so they run alone (Go runs a
// package's parallel tests after its others).
func TestMain(m *testing.M) {
	// A dial given up on leaves the standard library's DNS lookup running
	// until the resolver's own timeout (the README's TLS snippet dials
	// names that do not resolve): net's goroutines, not ours.
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("net.(*Resolver).goLookupIPCNAMEOrder"),
		goleak.IgnoreAnyFunction("net.(*Resolver).goLookupIPCNAMEOrder.func3.1"),
		goleak.IgnoreTopFunction("net.(*Resolver).lookupIPAddr.func2"))
}

const sessionTimeout = 2 * time.Second

// connect opens a zklock session on c through the harness's dialer (so the
// harness can expire it) and waits until it is connected.
func connect(t testing.TB, c *zktest.Cluster, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	all := append([]zklock.SessionOption{zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(sessionTimeout)}, opts...)
	s, err := zklock.Connect(c.Servers(), all...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.Eventually(t, func() bool { return s.State() == zklock.StateConnected }, 20*time.Second, 5*time.Millisecond)
	return s
}

func newMutex(t testing.TB, s *zklock.Session, path string, opts ...zklock.Option) *zklock.Mutex {
	t.Helper()
	m, err := zklock.NewMutex(s, path, opts...)
	require.NoError(t, err)
	return m
}

func children(t testing.TB, conn *zk.Conn, path string) []string {
	t.Helper()
	cs, _, err := conn.Children(path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	require.NoError(t, err)
	sort.Strings(cs)
	return cs
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestIntegration_MutualExclusionAndTokens(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	sessions := []*zklock.Session{connect(t, c), connect(t, c)}
	const workers, rounds = 8, 64 // 512 acquisitions
	var (
		inside  atomic.Int32
		overlap atomic.Int32
		mu      sync.Mutex
		tokens  []int64
		errs    = make(chan error, workers)
		wg      sync.WaitGroup
	)
	for w := range workers {
		s := sessions[w%len(sessions)]
		m := newMutex(t, s, "/locks/exclusion")
		wg.Go(func() {
			for range rounds {
				h, err := m.Lock(ctxTimeout(t, time.Minute))
				if err != nil {
					errs <- err
					return
				}
				if inside.Add(1) != 1 {
					overlap.Add(1)
				}
				ok, stat, err := s.Conn().Exists(h.Node())
				if err != nil || !ok || stat.Czxid != h.Token() {
					errs <- fmt.Errorf("token %d of %s is not its czxid (%v, %v)", h.Token(), h.Node(), stat, err)
				}
				mu.Lock()
				tokens = append(tokens, h.Token())
				mu.Unlock()
				inside.Add(-1)
				if err := h.Release(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Zero(t, overlap.Load(), "two holders at once")
	require.Len(t, tokens, workers*rounds)
	for i := 1; i < len(tokens); i++ {
		require.Greater(t, tokens[i], tokens[i-1], "tokens must increase from holder to holder")
	}
	require.Empty(t, children(t, sessions[0].Conn(), "/locks/exclusion"))
}

func TestIntegration_Reentrancy(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	m := newMutex(t, s, "/locks/reentrant")
	ctx := ctxTimeout(t, 30*time.Second)

	h1, err := m.Lock(ctx)
	require.NoError(t, err)
	h2, err := m.Lock(h1.Context())
	require.NoError(t, err)
	inner, cancel := context.WithCancel(h2.Context()) // a derived context re-enters too
	defer cancel()
	h3, err := m.TryLock(inner)
	require.NoError(t, err)
	require.Equal(t, h1.Node(), h3.Node())
	require.Equal(t, h1.Token(), h3.Token())
	require.Len(t, children(t, s.Conn(), "/locks/reentrant"), 1)

	// Another owner, even in this goroutine, does not re-enter.
	_, err = m.TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)

	require.NoError(t, h3.Release())
	require.ErrorIs(t, h3.Release(), zklock.ErrNotHeld, "a hold is released once")
	require.NoError(t, h2.Release())
	require.Len(t, children(t, s.Conn(), "/locks/reentrant"), 1, "the node stays until the last release")
	require.NoError(t, h1.Context().Err())
	require.NoError(t, h1.Release())
	require.Empty(t, children(t, s.Conn(), "/locks/reentrant"))
	require.ErrorIs(t, context.Cause(h1.Context()), zklock.ErrReleased)
	require.ErrorIs(t, h1.Err(), zklock.ErrReleased)

	var nobody *zklock.Hold
	require.ErrorIs(t, nobody.Release(), zklock.ErrNotHeld)
	_, err = m.Lock(h1.Context()) // the hold is over: its context no longer grants anything
	require.ErrorIs(t, err, zklock.ErrReleased)
}

func TestIntegration_CancelAndDeadlineLeaveNoNode(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	holder, err := newMutex(t, s1, "/locks/cancel").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	waiter := newMutex(t, s2, "/locks/cancel")

	// TryLock on a held lock answers at once and writes nothing.
	start := time.Now()
	_, err = waiter.TryLock(ctxTimeout(t, 10*time.Second))
	require.ErrorIs(t, err, zklock.ErrLocked)
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, []string{holder.Node()[len("/locks/cancel/"):]}, children(t, s1.Conn(), "/locks/cancel"))

	// Deadline while waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = waiter.Lock(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// On a loaded machine the deadline may fall while the create is still in
	// flight; the node is then deleted as soon as the create returns.
	require.Eventually(t, func() bool { return len(children(t, s1.Conn(), "/locks/cancel")) == 1 }, 10*time.Second, 5*time.Millisecond)

	// Cancel while waiting, once the waiter is queued.
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(ctx)
		done <- err
	}()
	require.Eventually(t, func() bool { return len(children(t, s1.Conn(), "/locks/cancel")) == 2 }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	// The node is visible to others a moment before the create's reply
	// reaches the waiter; cancelled in that moment, it is deleted as soon as
	// the reply arrives.
	require.Eventually(t, func() bool { return len(children(t, s1.Conn(), "/locks/cancel")) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, holder.Release())
}

func TestIntegration_LossOnServerSideExpiry(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	h, err := newMutex(t, s, "/locks/expiry").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.NoError(t, c.Expire(s.ID()))
	select {
	case <-h.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("no loss signal after the session expired")
	}
	require.ErrorIs(t, h.Err(), zklock.ErrLost)
	require.ErrorIs(t, h.Err(), zklock.ErrSessionExpired)
	require.ErrorIs(t, h.Release(), zklock.ErrLost)

	// The same session recovers and can lock again.
	h2, err := newMutex(t, s, "/locks/expiry").Lock(ctxTimeout(t, 20*time.Second))
	require.NoError(t, err)
	require.Greater(t, h2.Token(), h.Token())
	require.NoError(t, h2.Release())
}

func TestIntegration_WaiterStopsOnExpiry(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	holder, err := newMutex(t, s1, "/locks/wexp").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := newMutex(t, s2, "/locks/wexp").Lock(ctxTimeout(t, time.Minute))
		done <- err
	}()
	require.Eventually(t, func() bool { return len(children(t, s1.Conn(), "/locks/wexp")) == 2 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, c.Expire(s2.ID()))
	select {
	case err := <-done:
		require.ErrorIs(t, err, zklock.ErrSessionExpired)
	case <-time.After(20 * time.Second):
		t.Fatal("the waiter kept waiting after its session expired")
	}
	require.Len(t, children(t, s1.Conn(), "/locks/wexp"), 1)
	require.NoError(t, holder.Release())
}

func TestIntegration_LossBeforeAnotherAcquires(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	p := c.Proxy(t)
	victim := connect(t, c, zklock.WithDialer(p.Dialer()))
	other := connect(t, c)
	h, err := newMutex(t, victim, "/locks/partition").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)

	lostAt := make(chan time.Time, 1)
	go func() {
		<-h.Done()
		lostAt <- time.Now()
	}()
	p.Blackhole()
	h2, err := newMutex(t, other, "/locks/partition").Lock(ctxTimeout(t, 30*time.Second))
	acquiredAt := time.Now()
	require.NoError(t, err)
	select {
	case lost := <-lostAt:
		require.True(t, lost.Before(acquiredAt), "loss signalled at %v, another client acquired at %v", lost, acquiredAt)
		t.Logf("loss signalled %v before the other client acquired", acquiredAt.Sub(lost))
	default:
		t.Fatal("another client acquired while the partitioned holder had no loss signal")
	}
	require.ErrorIs(t, h.Err(), zklock.ErrLost)
	require.Greater(t, h2.Token(), h.Token())
	require.NoError(t, h2.Release())
	p.Heal()
}

func TestIntegration_DroppedCreateReplyLeavesNoOrphan(t *testing.T) {
	c := zktest.Start(t)
	admin := c.Connect(t, sessionTimeout)
	_, err := admin.Create("/dropped", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	t.Run("success", func(t *testing.T) {
		p := c.Proxy(t)
		s := connect(t, c, zklock.WithDialer(p.Dialer()))
		p.DropNextCreateReply()
		h, err := newMutex(t, s, "/dropped/ok").Lock(ctxTimeout(t, 30*time.Second))
		require.NoError(t, err)
		require.Equal(t, []string{h.Node()[len("/dropped/ok/"):]}, children(t, admin, "/dropped/ok"), "exactly our node, adopted after the lost reply")
		require.NoError(t, h.Release())
		require.Empty(t, children(t, admin, "/dropped/ok"))
	})
	t.Run("failure", func(t *testing.T) {
		p := c.Proxy(t)
		s := connect(t, c, zklock.WithDialer(p.Dialer()))
		// The create is applied, its reply dropped, and the client cut off
		// until after the acquire's deadline.
		_, err := admin.Create("/dropped/fail", nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		p.DropNextCreateReply()
		p.Blackhole()
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err = newMutex(t, s, "/dropped/fail").Lock(ctx)
		require.Error(t, err)
		p.Heal()
		require.Eventually(t, func() bool { return len(children(t, admin, "/dropped/fail")) == 0 }, 20*time.Second, 10*time.Millisecond,
			"the node whose create reply was lost must be found and deleted")
	})
}

func TestIntegration_BadInput(t *testing.T) {
	_, err := zklock.NewMutex(nil, "/locks/a")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.Connect(nil)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.Connect([]string{"127.0.0.1:1"}, zklock.WithSessionTimeout(0))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)

	c := zktest.Start(t)
	s := connect(t, c)
	for _, p := range []string{"", "locks/a", "/locks/a/", "/", "/locks//a"} {
		_, err := zklock.NewMutex(s, p)
		require.ErrorIs(t, err, zklock.ErrInvalidPath, "%q", p)
	}
	m := newMutex(t, s, "/locks/bad")
	//nolint:staticcheck // a nil context is the bad input under test
	_, err = m.Lock(nil) //lint:ignore SA1012 testing bad input
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = m.Lock(cancelled)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, children(t, s.Conn(), "/locks/bad"))
}

func TestIntegration_CreatorOnlyACL(t *testing.T) {
	c := zktest.Start(t)
	owner := connect(t, c, zklock.WithAuth("digest", []byte("owner:secret")))
	h, err := newMutex(t, owner, "/locks/acl", zklock.WithACL(zk.AuthACL(zk.PermAll))).Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)

	intruder := connect(t, c)
	require.ErrorIs(t, intruder.Conn().Delete(h.Node(), -1), zk.ErrNoAuth)
	_, err = newMutex(t, intruder, "/locks/acl").Lock(ctxTimeout(t, 5*time.Second))
	require.ErrorIs(t, err, zk.ErrNoAuth)
	// Since 3.8.4 and 3.9.2 exists needs READ (ZOOKEEPER-2590): the
	// intruder cannot even see the node. Before, it could.
	v, err := c.ServerVersion(0)
	require.NoError(t, err)
	ok, _, err := intruder.Conn().Exists(h.Node())
	if zktest.ExistsNeedsRead(v) {
		require.ErrorIs(t, err, zk.ErrNoAuth, "ZooKeeper %s", v)
	} else {
		require.NoError(t, err, "ZooKeeper %s", v)
		require.True(t, ok)
	}
	ok, _, err = owner.Conn().Exists(h.Node())
	require.NoError(t, err)
	require.True(t, ok, "the intruder deleted nothing")
	require.NoError(t, h.Err(), "the holder keeps the lock")
	require.NoError(t, h.Release())
}

// A Lock called before the session's first connection, whose caller gives
// up before the server is reached, leaves no node behind once the session
// connects: a create sent while connecting would run under a session the
// library could not name, and its cleanup was once dropped, leaving an
// orphan that blocked the lock for the life of the session (found by the
// reliability suite, S12, at start-up).
func TestIntegration_LockBeforeFirstConnectLeavesNothing(t *testing.T) {
	c := zktest.Start(t)
	admin := c.Connect(t, 10*time.Second)
	for _, p := range []string{"/early", "/early/lock"} { // persistent: the create can succeed
		_, err := admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	px := c.Proxy(t)
	px.Blackhole()
	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(px.Dialer()), zklock.WithSessionTimeout(sessionTimeout))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	m := newMutex(t, s, "/early/lock")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = m.Lock(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	px.Heal()
	require.Eventually(t, func() bool { return s.State() == zklock.StateConnected }, 20*time.Second, 5*time.Millisecond)
	// Anything the session queued before it connected is answered before
	// this (one session's requests are served in order).
	_, _, err = s.Conn().Exists("/")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		children, _, err := admin.Children("/early/lock")
		return (err == nil || errors.Is(err, zk.ErrNoNode)) && len(children) == 0
	}, 5*time.Second, 10*time.Millisecond, "a node outlived its Lock call")
}
