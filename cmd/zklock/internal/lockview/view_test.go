package lockview_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func connect(t testing.TB, c *zktest.Cluster, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	s, err := zklock.Connect(c.Servers(), append([]zklock.SessionOption{zklock.WithDialer(c.Dialer())}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.WaitConnected(ctxT(t, 30*time.Second)))
	return s
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func newView(t testing.TB, s *zklock.Session, cfg lockview.Config) *lockview.View {
	t.Helper()
	v, err := lockview.New(s, cfg)
	require.NoError(t, err)
	t.Cleanup(v.Close)
	select {
	case <-v.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("the view's first walk did not end")
	}
	return v
}

// lockAt waits until the view shows the lock at p and cond holds.
func lockAt(t testing.TB, v *lockview.View, p string, cond func(lockview.Lock) bool) lockview.Lock {
	t.Helper()
	var l lockview.Lock
	require.Eventually(t, func() bool {
		var ok bool
		l, _, ok = v.Lock(p)
		return ok && cond(l)
	}, 20*time.Second, 10*time.Millisecond, "lock %s: last seen %+v", p, l)
	return l
}

func hold(t testing.TB, l interface {
	Lock(context.Context) (*zklock.Hold, error)
}) *zklock.Hold {
	t.Helper()
	h, err := l.Lock(ctxT(t, 20*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Release() })
	return h
}

// Every recipe under the root is found by walking and told by its node
// names; holders, tokens, waiters and their predecessors are shown; nodes
// that are not lock nodes are counted, not shown as locks.
func TestIntegration_Recipes(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	other := connect(t, c)
	ctx := ctxT(t, time.Minute)

	m, err := zklock.NewMutex(s, "/locks/a/mutex")
	require.NoError(t, err)
	h := hold(t, m)
	m2, err := zklock.NewMutex(other, "/locks/a/mutex")
	require.NoError(t, err)
	var wg sync.WaitGroup
	defer wg.Wait()
	waitCtx, stopWait := context.WithCancel(ctx)
	defer stopWait()
	wg.Go(func() { _, _ = m2.Lock(waitCtx) })

	rw, err := zklock.NewRWLock(s, "/locks/rw")
	require.NoError(t, err)
	hold(t, rw.ReadLock())
	sem, err := zklock.NewSemaphore(s, "/locks/deep/er/sem", 2)
	require.NoError(t, err)
	lease, err := sem.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lease.Release() })
	latch, err := zklock.NewLeaderLatch(s, "/locks/latch", "latch-id-1")
	require.NoError(t, err)
	require.NoError(t, latch.Start(ctx))
	t.Cleanup(func() { _ = latch.Close() })
	_, err = latch.Await(ctx)
	require.NoError(t, err)
	_, err = s.Conn().Create("/locks/a/mutex/not-a-lock-node", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = s.Conn().Create("/locks/config", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	_, err = s.Conn().Create("/locks/secret", nil, 0, zk.DigestACL(zk.PermAll, "someone", "else"))
	require.NoError(t, err)

	v := newView(t, s, lockview.Config{Root: "/locks"})
	require.Contains(t, v.Status().Problem, "cannot list /locks/secret: zk: not authenticated", "an unreadable directory is said so, and does not hold up the walk")
	l := lockAt(t, v, "/locks/a/mutex", func(l lockview.Lock) bool { return l.Waiting == 1 })
	require.Equal(t, lockview.RecipeMutex, l.Recipe)
	require.Equal(t, []string{"curator"}, l.Dialects)
	require.Len(t, l.Holders, 1)
	require.Equal(t, h.Token(), l.Token)
	require.Equal(t, h.Token(), l.Holders[0].Token)
	require.Equal(t, fmt.Sprintf("0x%x", uint64(s.ID())), l.Holders[0].Session)
	require.Equal(t, 1, l.Others)
	require.Len(t, l.Queue, 2)
	require.Equal(t, l.Queue[0].Name, l.Queue[1].Waits, "a waiter watches its predecessor")
	require.False(t, l.OldestWait.IsZero())

	l = lockAt(t, v, "/locks/rw", func(lockview.Lock) bool { return true })
	require.Equal(t, lockview.RecipeReadWrite, l.Recipe)
	l = lockAt(t, v, "/locks/deep/er/sem", func(l lockview.Lock) bool { return len(l.Holders) == 1 })
	require.Equal(t, lockview.RecipeSemaphore, l.Recipe)
	require.Equal(t, lease.Token(), l.Token)
	l = lockAt(t, v, "/locks/latch", func(lockview.Lock) bool { return true })
	require.Equal(t, lockview.RecipeLatch, l.Recipe)
	require.Equal(t, "latch-id-1", l.Holders[0].ID)

	o := v.Overview("")
	var paths []string
	for _, l := range o.Locks {
		paths = append(paths, l.Path)
	}
	require.Equal(t, []string{"/locks/a/mutex", "/locks/deep/er/sem", "/locks/latch", "/locks/rw"}, paths)
	require.True(t, o.Connected)
	require.Len(t, v.Overview("deep").Locks, 1)
}

// The timeline tells what happened while the view watched: a waiter
// queued, acquired after the holder released, a waiter gave up, and a
// latch leader whose node another client deleted lost its leadership.
func TestIntegration_Timeline(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	other := connect(t, c)
	ctx := ctxT(t, time.Minute)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})

	m, err := zklock.NewMutex(s, "/locks/t")
	require.NoError(t, err)
	h := hold(t, m)
	m2, err := zklock.NewMutex(other, "/locks/t")
	require.NoError(t, err)
	got := make(chan *zklock.Hold, 1)
	go func() {
		h, _ := m2.Lock(ctx)
		got <- h
	}()
	lockAt(t, v, "/locks/t", func(l lockview.Lock) bool { return l.Waiting == 1 })
	gaveUp, err := zklock.NewMutex(other, "/locks/t")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = gaveUp.Lock(short)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, h.Release())
	h2 := <-got
	require.NotNil(t, h2)
	defer h2.Release()
	l := lockAt(t, v, "/locks/t", func(l lockview.Lock) bool {
		return len(l.Holders) == 1 && l.Holders[0].Token == h2.Token() && hasKinds(l, "queued", "acquired", "released", "gave-up")
	})
	require.Equal(t, h2.Token(), l.Timeline[0].Token, "newest first: the waiter's acquisition")
	require.Equal(t, lockview.EventAcquired, l.Timeline[0].Kind)

	latch, err := zklock.NewLeaderLatch(s, "/locks/leader", "L1")
	require.NoError(t, err)
	require.NoError(t, latch.Start(ctx))
	defer latch.Close()
	term, err := latch.Await(ctx)
	require.NoError(t, err)
	lockAt(t, v, "/locks/leader", func(l lockview.Lock) bool { return len(l.Holders) == 1 })
	require.NoError(t, other.Conn().Delete(s.FullPath(term.Node()), -1))
	l = lockAt(t, v, "/locks/leader", func(l lockview.Lock) bool { return hasKinds(l, "lost") })
	for _, e := range l.Timeline {
		if e.Kind == lockview.EventLost {
			require.Equal(t, "L1", e.ID)
			require.Equal(t, term.Token(), e.Token)
			require.Contains(t, e.Why, "deleted by another client")
		}
	}
}

func hasKinds(l lockview.Lock, kinds ...string) bool {
	seen := map[string]bool{}
	for _, e := range l.Timeline {
		seen[e.Kind] = true
	}
	for _, k := range kinds {
		if !seen[k] {
			return false
		}
	}
	return true
}

// A root that does not exist is said so, and watched: it shows once made.
// A lost connection is said so, and the view recovers when it returns.
func TestIntegration_RootMissingAndConnectionLost(t *testing.T) {
	c := zktest.Start(t)
	p := c.Proxy(t)
	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(p.Dialer()), zklock.WithSessionTimeout(6*time.Second)) // the loss is noticed in 4s; it may expire, which the view survives too
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.WaitConnected(ctxT(t, 20*time.Second)))
	v := newView(t, s, lockview.Config{Root: "/nowhere"})
	require.Contains(t, v.Status().Problem, "/nowhere does not exist")
	require.Empty(t, v.Overview("").Locks)

	other := connect(t, c)
	m, err := zklock.NewMutex(other, "/nowhere/job")
	require.NoError(t, err)
	h := hold(t, m)
	lockAt(t, v, "/nowhere/job", func(l lockview.Lock) bool { return len(l.Holders) == 1 })
	require.Empty(t, v.Status().Problem)

	p.Blackhole()
	require.Eventually(t, func() bool { return !v.Status().Connected }, 30*time.Second, 20*time.Millisecond)
	require.Contains(t, v.Status().Problem, "connection to ZooKeeper is lost")
	require.NoError(t, h.Release())
	p.Heal()
	require.Eventually(t, func() bool { return v.Status().Connected }, 30*time.Second, 20*time.Millisecond)
	h2 := hold(t, m)
	lockAt(t, v, "/nowhere/job", func(l lockview.Lock) bool { return len(l.Holders) == 1 && l.Token == h2.Token() })
	require.Empty(t, v.Status().Problem)
}

// A directory with 10,000 children is counted whole and read only in part,
// and says so; the view does not hang on it.
func TestIntegration_ManyChildren(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10,000 nodes")
	}
	c := zktest.Start(t)
	s := connect(t, c)
	conn := s.Conn()
	_, err := conn.Create("/locks", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create("/locks/big", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	const n = 10000
	for i := 0; i < n; i += 500 { // in transactions of 500 creates
		var ops []any
		for range 500 {
			ops = append(ops, &zk.CreateRequest{Path: "/locks/big/_c_00000000-0000-4000-8000-000000000000-lock-",
				Flags: zk.FlagEphemeral | zk.FlagSequence, Acl: zk.WorldACL(zk.PermAll)})
		}
		_, err := conn.Multi(ops...)
		require.NoError(t, err)
	}
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	l := lockAt(t, v, "/locks/big", func(lockview.Lock) bool { return true })
	require.Len(t, l.Queue, n)
	require.Equal(t, n-1, l.Waiting)
	require.Contains(t, l.Problem, "10000 nodes")
	require.True(t, strings.Contains(l.Problem, "not read"))
}
