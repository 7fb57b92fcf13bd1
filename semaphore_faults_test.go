package zklock_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// waitingForLease starts a Lock of m on a mutex that another session holds
// and returns once the waiter holds the internal lock and its lease node is
// queued (two leases, one lock node).
func waitingForLease(t *testing.T, admin *zk.Conn, path string, lock func(context.Context) (*zklock.Hold, error), ctx context.Context) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		h, err := lock(ctx)
		if err == nil {
			_ = h.Release()
			err = errors.New("acquired a taken semaphore mutex")
		}
		done <- err
	}()
	require.Eventually(t, func() bool {
		return len(children(t, admin, path+"/leases")) == 2 && len(children(t, admin, path+"/locks")) == 1
	}, 10*time.Second, 5*time.Millisecond)
	return done
}

// A waiter that gives up (deadline, cancel) or whose session expires leaves
// neither its internal lock node nor its lease node behind.
func TestIntegration_SemaphoreLeavesNoOrphans(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	admin := c.Connect(t, sessionTimeout)
	holderSession := connect(t, c)
	holder, err := newSemMutex(t, holderSession, "/sem/orphans").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	// The nodes are deleted before the acquire returns unless a request
	// was cut short by the context, in which case just after it.
	onlyHolder := func(t *testing.T) {
		t.Helper()
		want := []string{holder.Node()[len("/sem/orphans/leases/"):]}
		require.Eventually(t, func() bool {
			return len(children(t, admin, "/sem/orphans/locks")) == 0 &&
				slices.Equal(want, children(t, admin, "/sem/orphans/leases"))
		}, 10*time.Second, 5*time.Millisecond, "only the holder's lease may remain")
	}

	t.Run("deadline", func(t *testing.T) {
		s := connect(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		done := waitingForLease(t, admin, "/sem/orphans", newSemMutex(t, s, "/sem/orphans").Lock, ctx)
		require.ErrorIs(t, <-done, context.DeadlineExceeded)
		onlyHolder(t)
	})
	t.Run("deadline behind the internal lock", func(t *testing.T) {
		s1, s2 := connect(t, c), connect(t, c)
		first := waitingForLease(t, admin, "/sem/orphans", newSemMutex(t, s1, "/sem/orphans").Lock, ctxTimeout(t, time.Minute))
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := newSemMutex(t, s2, "/sem/orphans").Lock(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Eventually(t, func() bool { return len(children(t, admin, "/sem/orphans/locks")) == 1 }, 10*time.Second, 5*time.Millisecond,
			"only the first waiter's lock node")
		require.NoError(t, s1.Close())
		require.ErrorIs(t, <-first, zklock.ErrClosed)
		require.Eventually(t, func() bool { return len(children(t, admin, "/sem/orphans/leases")) == 1 }, 10*time.Second, 5*time.Millisecond)
		onlyHolder(t)
	})
	t.Run("cancel", func(t *testing.T) {
		s := connect(t, c)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := waitingForLease(t, admin, "/sem/orphans", newSemMutex(t, s, "/sem/orphans").Lock, ctx)
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		onlyHolder(t)
	})
	t.Run("expiry", func(t *testing.T) {
		s := connect(t, c)
		done := waitingForLease(t, admin, "/sem/orphans", newSemMutex(t, s, "/sem/orphans").Lock, ctxTimeout(t, time.Minute))
		require.NoError(t, c.Expire(s.ID()))
		select {
		case err := <-done:
			require.ErrorIs(t, err, zklock.ErrSessionExpired)
		case <-time.After(20 * time.Second):
			t.Fatal("the waiter kept waiting after its session expired")
		}
		onlyHolder(t)
	})
	t.Run("holder expiry", func(t *testing.T) {
		require.NoError(t, c.Expire(holderSession.ID()))
		select {
		case <-holder.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("no loss signal after the holder's session expired")
		}
		require.ErrorIs(t, holder.Err(), zklock.ErrLost)
		h, err := newSemMutex(t, connect(t, c), "/sem/orphans").Lock(ctxTimeout(t, 20*time.Second))
		require.NoError(t, err)
		require.Greater(t, h.Token(), holder.Token())
		require.NoError(t, h.Release())
		require.Empty(t, children(t, admin, "/sem/orphans/leases"))
	})
}

// A create whose reply is lost (the server applied it) is found by its
// protected prefix: adopted on success, deleted on failure, for the
// internal lock node and for the lease node.
func TestIntegration_SemaphoreDroppedCreateReply(t *testing.T) {
	// The last subtest reads an emptied directory's cversion: no reaper
	// may delete it first.
	c := zktest.Start(t, zktest.WithContainerCheckInterval(time.Hour))
	admin := c.Connect(t, sessionTimeout)
	acl := zk.WorldACL(zk.PermAll)

	// blocker queues a foreign Curator-format lock node under path/locks, so
	// that our acquirer queues behind it; deleting it lets the acquirer go
	// on to create its lease node, whose reply the test can then drop.
	blocker := func(t *testing.T, path string) string {
		for _, p := range []string{path, path + "/locks", path + "/leases"} {
			_, err := admin.Create(p, nil, 0, acl)
			require.NoError(t, err)
		}
		node, err := admin.Create(path+"/locks/_c_00000000-0000-0000-0000-000000000000-lock-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
		require.NoError(t, err)
		return node
	}

	t.Run("lock node, success", func(t *testing.T) {
		p := c.Proxy(t)
		s := connect(t, c, zklock.WithDialer(p.Dialer()))
		_, err := admin.Create("/dropped-lock", nil, 0, acl)
		require.NoError(t, err)
		_, err = admin.Create("/dropped-lock/locks", nil, 0, acl)
		require.NoError(t, err)
		p.DropNextCreateReply() // the internal lock node's create
		h, err := newSemMutex(t, s, "/dropped-lock").Lock(ctxTimeout(t, 30*time.Second))
		require.NoError(t, err)
		require.Empty(t, children(t, admin, "/dropped-lock/locks"))
		require.Len(t, children(t, admin, "/dropped-lock/leases"), 1)
		require.NoError(t, h.Release())
		require.Empty(t, children(t, admin, "/dropped-lock/leases"))
	})
	t.Run("lease node, success", func(t *testing.T) {
		p := c.Proxy(t)
		s := connect(t, c, zklock.WithDialer(p.Dialer()))
		block := blocker(t, "/dropped-ok")
		done := make(chan *zklock.Hold, 1)
		errc := make(chan error, 1)
		go func() {
			h, err := newSemMutex(t, s, "/dropped-ok").Lock(ctxTimeout(t, 30*time.Second))
			errc <- err
			done <- h
		}()
		require.Eventually(t, func() bool { return len(children(t, admin, "/dropped-ok/locks")) == 2 }, 10*time.Second, 5*time.Millisecond)
		p.DropNextCreateReply() // the next create is the lease node's
		require.NoError(t, admin.Delete(block, -1))
		require.NoError(t, <-errc)
		h := <-done
		require.Equal(t, []string{h.Node()[len("/dropped-ok/leases/"):]}, children(t, admin, "/dropped-ok/leases"), "exactly our lease, adopted after the lost reply")
		require.Empty(t, children(t, admin, "/dropped-ok/locks"))
		require.NoError(t, h.Release())
		require.Empty(t, children(t, admin, "/dropped-ok/leases"))
	})
	t.Run("lease node, failure", func(t *testing.T) {
		p := c.Proxy(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The drop closes the connection: give up the acquire right then,
		// while the lease create's outcome is unknown.
		var armed atomic.Bool
		s := connect(t, c, zklock.WithDialer(p.Dialer()), zklock.WithObserver(func(ev zklock.Event) {
			if ev.Kind == zklock.EventState && ev.State == zklock.StateSuspended && armed.Load() {
				cancel()
			}
		}))
		block := blocker(t, "/dropped-fail")
		errc := make(chan error, 1)
		go func() {
			_, err := newSemMutex(t, s, "/dropped-fail").Lock(ctx)
			errc <- err
		}()
		require.Eventually(t, func() bool { return len(children(t, admin, "/dropped-fail/locks")) == 2 }, 10*time.Second, 5*time.Millisecond)
		armed.Store(true)
		p.DropNextCreateReply()
		require.NoError(t, admin.Delete(block, -1))
		require.ErrorIs(t, <-errc, context.Canceled)
		require.Eventually(t, func() bool {
			return len(children(t, admin, "/dropped-fail/leases")) == 0 && len(children(t, admin, "/dropped-fail/locks")) == 0
		}, 20*time.Second, 10*time.Millisecond, "the lease whose create reply was lost and the internal lock node must be deleted")
		_, stat, err := admin.Exists("/dropped-fail/leases")
		require.NoError(t, err)
		require.EqualValues(t, 2, stat.Cversion, "one lease node was created (its reply dropped), then deleted")
	})
}

// A waiter whose connection drops while it waits for a lease reconnects
// within its session and still takes the lease when one is freed (its
// children watch is re-armed or the leases are listed again).
func TestIntegration_SemaphoreWaiterSurvivesReconnect(t *testing.T) {
	c := zktest.Start(t)
	admin := c.Connect(t, sessionTimeout)
	p := c.Proxy(t)
	holderSession := connect(t, c)
	suspended := make(chan struct{}, 1)
	waiterSession := connect(t, c, zklock.WithDialer(p.Dialer()), zklock.WithLossLimit(-1),
		zklock.WithObserver(func(ev zklock.Event) {
			if ev.Kind == zklock.EventState && ev.State == zklock.StateSuspended {
				select {
				case suspended <- struct{}{}:
				default:
				}
			}
		}))
	holder, err := newSemMutex(t, holderSession, "/sem/reconnect").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	got := make(chan *zklock.Hold, 1)
	go func() {
		h, err := newSemMutex(t, waiterSession, "/sem/reconnect").Lock(ctxTimeout(t, time.Minute))
		if err == nil {
			got <- h
		}
		close(got)
	}()
	require.Eventually(t, func() bool { return len(children(t, admin, "/sem/reconnect/leases")) == 2 }, 10*time.Second, 5*time.Millisecond)
	sid := waiterSession.ID()
	p.Cut()
	select {
	case <-suspended:
	case <-time.After(10 * time.Second):
		t.Fatal("the cut did not suspend the waiter's session")
	}
	require.Eventually(t, func() bool { return waiterSession.State() == zklock.StateConnected }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, sid, waiterSession.ID(), "same session after the reconnect")
	require.NoError(t, holder.Release())
	h, ok := <-got
	require.True(t, ok, "the waiter did not take the freed lease")
	require.Greater(t, h.Token(), holder.Token())
	require.Empty(t, children(t, admin, "/sem/reconnect/locks"))
	require.NoError(t, h.Release())
}

// An uncontended Acquire+Release costs six requests: the internal mutex's
// create, (pipelined) listing and delete, the lease's create and watched
// listing, and the lease's delete. The lease's token comes with its create's
// reply: no Exists.
func TestIntegration_SemaphoreRequestsPerCycle(t *testing.T) {
	c := zktest.Start(t)
	px := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(px.Dialer()))
	for _, p := range []string{"/sem-cost", "/sem-cost/x", "/sem-cost/x/locks", "/sem-cost/x/leases"} {
		_, err := s.Conn().Create(p, nil, 0, zk.WorldACL(zk.PermAll)) // persistent: never reaped between cycles
		require.NoError(t, err)
	}
	sem, err := zklock.NewSemaphore(s, "/sem-cost/x", 2)
	require.NoError(t, err)
	ctx := context.Background()
	const cycles = 10
	px.ResetCounts()
	for range cycles {
		h, err := sem.Acquire(ctx)
		require.NoError(t, err)
		require.Positive(t, h.Token())
		require.NoError(t, h.Release())
	}
	r := px.Requests()
	t.Logf("requests by opcode over %d cycles: %v", cycles, r)
	require.Equal(t, 2*cycles, r[1], "creates")
	require.Equal(t, 2*cycles, r[2], "deletes")
	require.Equal(t, 2*cycles, r[8]+r[12], "listings")
	require.Zero(t, r[3], "exists")
}
