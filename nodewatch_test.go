package zklock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// holder is one recipe, seen as "something that returns a Hold", for the
// node-deletion tests: lock takes it on s at path.
type holder struct {
	name string
	lock func(t *testing.T, s *zklock.Session, path string, waiter bool) func(context.Context) (*zklock.Hold, error)
}

func holders() []holder {
	return []holder{
		{"mutex", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			return newMutex(t, s, p).Lock
		}},
		{"semaphore-mutex", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			return newSemMutex(t, s, p).Lock
		}},
		{"semaphore-lease", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			return newSemaphore(t, s, p, 1).Acquire
		}},
		{"rw-write", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			return newRW(t, s, p).WriteLock().Lock
		}},
		{"rw-read", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			// The next waiter is a writer, so it waits for this reader.
			if waiter {
				return newRW(t, s, p).WriteLock().Lock
			}
			return newRW(t, s, p).ReadLock().Lock
		}},
		{"leader-term", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			e, err := zklock.NewLeaderElection(s, p, "me")
			require.NoError(t, err)
			return e.Campaign
		}},
		{"multi-lock-member", func(t *testing.T, s *zklock.Session, p string, waiter bool) func(context.Context) (*zklock.Hold, error) {
			ml := newMulti(t, newMutex(t, s, p), newMutex(t, s, p+"-other"))
			return func(ctx context.Context) (*zklock.Hold, error) {
				mh, err := ml.Lock(ctx)
				if err != nil {
					return nil, err
				}
				t.Cleanup(func() { _ = mh.Release() })
				return multiView(t, mh), nil
			}
		}},
	}
}

// multiView stands a MultiHold's first member in for the whole, checks that
// the MultiHold ends with it, and then releases the other members, as its
// user would.
func multiView(t *testing.T, mh *zklock.MultiHold) *zklock.Hold {
	h := mh.Holds()[0]
	go func() {
		<-h.Done()
		select {
		case <-mh.Done():
			_ = mh.Release()
		case <-time.After(5 * time.Second):
			t.Error("the multi-hold did not end with its member")
		}
	}()
	return h
}

// TestIntegration_NodeDeletedIsLoss: for every recipe, another client deletes
// the holder's node (or deletes it and creates one of the same name): the
// hold is lost within one notification, while the next waiter acquires.
func TestIntegration_NodeDeletedIsLoss(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	admin := connect(t, c)
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	for _, recreate := range []bool{false, true} {
		for _, r := range holders() {
			name := r.name
			if recreate {
				name += "/recreated"
			}
			t.Run(name, func(t *testing.T) {
				path := "/locks/deleted/" + name
				s1, s2 := connect(t, c), connect(t, c)
				lock1, lock2 := r.lock(t, s1, path, false), r.lock(t, s2, path, true)
				h, err := lock1(ctxTimeout(t, 20*time.Second))
				require.NoError(t, err)
				t.Cleanup(func() { _ = h.Release() })
				next := make(chan *zklock.Hold, 1)
				go func() {
					h2, err := lock2(ctxTimeout(t, 20*time.Second))
					if err != nil {
						t.Error(err)
						close(next)
						return
					}
					next <- h2
				}()
				// The second contender is queued behind the holder.
				require.Eventually(t, func() bool {
					return len(contenderNodes(t, admin.Conn(), path)) >= 2
				}, 10*time.Second, 5*time.Millisecond)

				deleted := time.Now()
				require.NoError(t, admin.Conn().Delete(h.Node(), -1))
				if recreate { // same name, another session's node
					_, err := admin.Conn().Create(h.Node(), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
					require.NoError(t, err)
				}
				select {
				case <-h.Done():
				case <-time.After(time.Second):
					t.Fatal("the hold was not lost within 1s of its node's deletion")
				}
				mu.Lock()
				latencies = append(latencies, time.Since(deleted))
				mu.Unlock()
				require.ErrorIs(t, h.Err(), zklock.ErrLost)
				require.ErrorIs(t, h.Err(), zklock.ErrNodeDeleted)
				require.ErrorIs(t, h.Err(), zklock.ErrNodeGone)
				require.Error(t, h.Context().Err())
				require.ErrorIs(t, context.Cause(h.Context()), zklock.ErrLost)

				if recreate {
					// The impostor blocks the queue until it goes; the
					// lost holder must not delete it.
					require.Equal(t, s1.State(), zklock.StateConnected)
					ok, stat, err := admin.Conn().Exists(h.Node())
					require.NoError(t, err)
					require.True(t, ok, "the lost holder deleted another session's node")
					require.Equal(t, admin.ID(), stat.EphemeralOwner)
					require.NoError(t, admin.Conn().Delete(h.Node(), -1))
				}
				h2, ok := <-next
				require.True(t, ok)
				require.NoError(t, h2.Err())
				require.Greater(t, h2.Token(), h.Token())
				require.NoError(t, h2.Release())
				// A lost hold's release reports the loss (a multi-lock's
				// member was released with its MultiHold already).
				err = h.Release()
				require.True(t, errors.Is(err, zklock.ErrLost) || errors.Is(err, zklock.ErrNotHeld), "%v", err)
			})
		}
	}
	slices.Sort(latencies)
	if len(latencies) > 0 {
		t.Logf("node deleted -> Done: median %v, max %v over %d holds",
			latencies[len(latencies)/2], latencies[len(latencies)-1], len(latencies))
	}
}

// contenderNodes lists the lock nodes at path, wherever the recipe keeps
// them (a semaphore's under leases/ and locks/).
func contenderNodes(t *testing.T, conn *zk.Conn, path string) []string {
	var out []string
	for _, dir := range []string{path, path + "/leases", path + "/locks"} {
		for _, c := range children(t, conn, dir) {
			if c != "leases" && c != "locks" {
				out = append(out, dir+"/"+c)
			}
		}
	}
	return out
}

// TestIntegration_NodeDeletedWatchedByLocalWaiter: a holder whose node a
// waiter of its own session already watches sends no watch of its own (the
// session has one); a deletion must reach it all the same.
func TestIntegration_NodeDeletedWatchedByLocalWaiter(t *testing.T) {
	c := zktest.Start(t)
	p := c.Proxy(t)
	s := connect(t, c, zklock.WithDialer(p.Dialer()))
	admin := connect(t, c)
	const path = "/locks/deleted-local"
	m := newMutex(t, s, path)
	first, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)

	type result struct {
		h   *zklock.Hold
		err error
	}
	second, third := make(chan result, 1), make(chan result, 1)
	lockInto := func(out chan result) {
		h, err := m.Lock(ctxTimeout(t, 20*time.Second))
		out <- result{h, err}
	}
	go lockInto(second)
	require.Eventually(t, func() bool { return len(children(t, admin.Conn(), path)) == 2 }, 10*time.Second, time.Millisecond)
	go lockInto(third)
	// Both waiters are parked, each watching its predecessor (the holder's
	// own watch is on the same path as the first waiter's: one watch).
	require.Eventually(t, func() bool {
		out, err := c.FourLetter(0, "wchs")
		return err == nil && len(children(t, admin.Conn(), path)) == 3 && containsLine(out, "Total watches:2")
	}, 10*time.Second, 5*time.Millisecond)

	before := p.Requests()[opGetData]
	require.NoError(t, first.Release())
	r := <-second
	require.NoError(t, r.err)
	require.Equal(t, before, p.Requests()[opGetData], "the new holder sent a watch although its successor provides one")

	require.NoError(t, admin.Conn().Delete(r.h.Node(), -1))
	select {
	case <-r.h.Done():
	case <-time.After(time.Second):
		t.Fatal("a holder watched only by its local successor missed its node's deletion")
	}
	require.ErrorIs(t, r.h.Err(), zklock.ErrNodeDeleted)
	r3 := <-third
	require.NoError(t, r3.err)
	require.NoError(t, r3.h.Release())
}

const opGetData = 4

func containsLine(s, line string) bool {
	return slices.Contains(strings.Split(s, "\n"), line)
}

// TestIntegration_OwnReleaseIsNotLoss: releasing never reports a loss, and
// leaves no watch on the server, for holds that sent their own watch and
// for revocable ones.
func TestIntegration_OwnReleaseIsNotLoss(t *testing.T) {
	c := zktest.Start(t)
	var (
		mu   sync.Mutex
		lost []zklock.Event
	)
	s := connect(t, c, zklock.WithObserver(func(ev zklock.Event) {
		if ev.Kind == zklock.EventLost {
			mu.Lock()
			lost = append(lost, ev)
			mu.Unlock()
		}
	}))
	for _, opts := range [][]zklock.Option{nil, {zklock.WithRevocable()}} {
		m := newMutex(t, s, "/locks/own-release", opts...)
		for range 20 {
			h, err := m.Lock(ctxTimeout(t, 10*time.Second))
			require.NoError(t, err)
			require.NoError(t, h.Release())
			require.ErrorIs(t, h.Err(), zklock.ErrReleased)
			require.False(t, errors.Is(h.Err(), zklock.ErrLost))
		}
	}
	require.Eventually(t, func() bool {
		out, err := c.FourLetter(0, "wchs")
		return err == nil && containsLine(out, "Total watches:0")
	}, 10*time.Second, 10*time.Millisecond, "a released hold left a watch behind")
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, lost)
}

// A hold lost to another client's delete names the transaction that
// deleted its node where the server says it with the notification
// (ZooKeeper 3.9 and later, ZOOKEEPER-4655), and 0 where it does not.
func TestIntegration_DeletionZxid(t *testing.T) {
	c := zktest.Start(t)
	var states stateLog
	s := connect(t, c, zklock.WithObserver(states.observe))
	admin := c.Connect(t, 10*time.Second)
	v, err := c.ServerVersion(0)
	require.NoError(t, err)
	// The directories are persistent: a container emptied by the delete
	// may be reaped (every 100 ms here) before its pzxid is read.
	_, err = admin.Create("/zxid", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for _, name := range []string{"short", strings.Repeat("long-", 60)} { // the second's path is too long to be kept
		p := "/zxid/" + name
		_, err := admin.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		before := states.len()
		h, err := newMutex(t, s, p).Lock(ctxTimeout(t, 10*time.Second))
		require.NoError(t, err)
		// The hold's watch is set by a read sent as Lock returns: delete
		// once the server has it, so the notification tells of the loss.
		require.Eventually(t, func() bool {
			out, err := c.FourLetter(0, "wchp")
			return err == nil && strings.Contains(out, h.Node()+"\n")
		}, 10*time.Second, 5*time.Millisecond)
		require.NoError(t, admin.Delete(h.Node(), -1))
		<-h.Done()
		ok, stat, err := admin.Exists(p)
		require.NoError(t, err)
		require.True(t, ok, "the persistent directory %s is gone", p)
		var de *zklock.DeletedError
		require.ErrorAs(t, h.Err(), &de)
		require.ErrorIs(t, h.Err(), zklock.ErrNodeDeleted)
		require.Equal(t, h.Node(), de.Node)
		switch {
		case de.Zxid == 0 && states.len() > before:
			// The connection dropped (a loaded machine): the loss was found
			// by the reconnect's check, which has no zxid to name.
			t.Logf("the session changed state during the hold (%v): the deletion was found on reconnect", states.since(before))
		case !zktest.AtLeast(v, "3.9.0"), len(h.Node()) > 292:
			require.Zero(t, de.Zxid, "ZooKeeper %s, node %d bytes", v, len(h.Node()))
		default:
			require.Equal(t, stat.Pzxid, de.Zxid, "ZooKeeper %s: the delete is the directory's last child change", v)
			require.Greater(t, de.Zxid, h.Token())
			require.Contains(t, h.Err().Error(), "at zxid 0x")
		}
	}
}
