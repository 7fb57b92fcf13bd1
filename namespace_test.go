package zklock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

func TestValidateNamespace(t *testing.T) {
	for _, tc := range []struct {
		ns string
		ok bool
	}{
		{"", true}, {"app", true}, {"app/sub", true}, {"a-b_c.d", true},
		{"/app", false}, {"app/", false}, {"a//b", false}, {".", false}, {"app/..", false}, {"a\x00b", false}, {"/", false},
		{"a\tb", false}, {"a\u007fb", false}, {"a\ue000b", false}, {"a\ufff5b", false}, {"a\xffb", false}, {"é", true},
	} {
		err := zklock.ValidateNamespace(tc.ns)
		if tc.ok {
			require.NoError(t, err, "%q", tc.ns)
			continue
		}
		require.ErrorIs(t, err, zklock.ErrInvalidPath, "%q", tc.ns)
		_, err = zklock.Connect([]string{"127.0.0.1:1"}, zklock.WithNamespace(tc.ns))
		require.ErrorIs(t, err, zklock.ErrInvalidPath, "Connect with namespace %q", tc.ns)
	}
}

// A Curator client built with namespace("app") and a zklock session with
// WithNamespace("app") exclude each other on /locks/x, both ways, and a
// session without a namespace on /app/locks/x sees and joins the same queue.
func TestIntegration_NamespaceCuratorInterop(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		ns := connect(t, c, zklock.WithNamespace("app"))
		raw := connect(t, c)
		require.Equal(t, "app", ns.Namespace())
		require.Empty(t, raw.Namespace())
		require.Equal(t, "/app/locks/x", ns.FullPath("/locks/x"))
		ctx := ctxTimeout(t, time.Minute)

		// Ours first: the namespace node is created as Curator creates it, with
		// empty data, as a CONTAINER (reaped at the end of the test).
		mine := newMutex(t, ns, "/locks/x")
		h, err := mine.Lock(ctx)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(h.Node(), "/locks/x/_c_"), h.Node())
		require.Equal(t, "/locks/x", h.Path())
		require.Equal(t, "/app"+h.Node(), h.Guard().Path, "Guard carries the full znode path")
		data, _, err := raw.Conn().Get("/app")
		require.NoError(t, err)
		require.Empty(t, data)
		ok, nodeStat, err := raw.Conn().Exists("/app" + h.Node())
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, nodeStat.Czxid, h.Token())

		cur := g.CuratorNamespace(t, c.ConnectString(), sessionTimeout, "app")
		cur.Must(t, "mutex C /locks/x")
		cur.Must(t, "acquire C")
		plain := newMutex(t, raw, "/app/locks/x")
		require.Eventually(t, func() bool {
			ps, err := mine.Participants(ctx)
			return err == nil && len(ps) == 2
		}, 20*time.Second, 5*time.Millisecond)
		_, err = plain.TryLock(ctx)
		require.ErrorIs(t, err, zklock.ErrLocked, "the un-namespaced path is the same lock")

		// Participants: the namespace session shows /locks/x/..., the plain one
		// /app/locks/x/..., with the same nodes; Curator sees the same queue.
		viaNS, err := mine.Participants(ctx)
		require.NoError(t, err)
		viaRaw, err := zklock.Participants(ctx, raw, "/app/locks/x")
		require.NoError(t, err)
		viaNSFn, err := zklock.Participants(ctx, ns, "/locks/x")
		require.NoError(t, err)
		require.Equal(t, viaNS, viaNSFn)
		require.Len(t, viaRaw, 2)
		for i := range viaNS {
			require.Equal(t, viaRaw[i].Node, viaNS[i].Node)
			require.Equal(t, "/locks/x/"+viaNS[i].Node, viaNS[i].Path)
			require.Equal(t, "/app/locks/x/"+viaRaw[i].Node, viaRaw[i].Path)
		}
		require.Equal(t, h.Node(), viaNS[0].Path)
		require.True(t, viaNS[0].Holds)
		require.Equal(t, viaNS[0].Path+","+viaNS[1].Path, cur.Must(t, "participants C"), "Curator sees the same queue, with the same paths")

		// Ours releases: Curator acquires, reporting a node path without /app.
		require.Empty(t, cur.Buffered(), "Curator acquired while ours held")
		require.NoError(t, h.Release())
		ev, err := cur.WaitEvent(ctxTimeout(t, 20*time.Second), "C", "acquired")
		require.NoError(t, err)
		require.Equal(t, viaNS[1].Path, ev.Arg)

		// Curator holds: ours with and without the namespace wait behind it.
		got := make(chan *zklock.Hold, 2)
		errs := make(chan error, 2)
		for _, m := range []*zklock.Mutex{mine, plain} {
			go func() {
				h, err := m.Lock(ctx)
				if err != nil {
					errs <- err
					return
				}
				got <- h
			}()
			require.Eventually(t, func() bool {
				ps, err := mine.Participants(ctx)
				return err == nil && len(ps) >= 2 && len(ps) <= 3 && ps[len(ps)-1].Node != viaNS[1].Node
			}, 20*time.Second, 5*time.Millisecond)
		}
		require.Eventually(t, func() bool {
			ps, err := mine.Participants(ctx)
			return err == nil && len(ps) == 3
		}, 20*time.Second, 5*time.Millisecond)
		select {
		case h := <-got:
			t.Fatalf("%s acquired while Curator holds", h.Node())
		case err := <-errs:
			t.Fatal(err)
		default:
		}
		cur.Must(t, "release C")
		for range 2 {
			select {
			case h := <-got:
				require.NoError(t, h.Release())
			case err := <-errs:
				t.Fatal(err)
			case <-ctx.Done():
				t.Fatal("ours did not acquire after Curator released")
			}
		}
		// Nothing left: the server reaps the empty containers up to /app.
		require.Eventually(t, func() bool {
			ok, _, err := raw.Conn().Exists("/app")
			return err == nil && !ok
		}, 20*time.Second, 10*time.Millisecond, "the namespace node is a container")
	})
}

// Every recipe and helper takes the caller's path on a namespaced session
// and works under the namespace.
func TestIntegration_NamespaceRecipes(t *testing.T) {
	c := zktest.Start(t)
	ns := connect(t, c, zklock.WithNamespace("app/sub"))
	raw := connect(t, c)
	ctx := ctxTimeout(t, time.Minute)
	var data []byte
	under := func(h *zklock.Hold, lockPath string) {
		t.Helper()
		require.True(t, strings.HasPrefix(h.Node(), lockPath+"/"), h.Node())
		ok, stat, err := raw.Conn().Exists("/app/sub" + h.Node())
		require.NoError(t, err)
		require.True(t, ok, "%s is under the namespace", h.Node())
		require.Equal(t, stat.Czxid, h.Token())
	}

	sm, err := zklock.NewSemaphoreMutex(ns, "/sem/m")
	require.NoError(t, err)
	h, err := sm.Lock(ctx)
	require.NoError(t, err)
	under(h, "/sem/m/leases")
	require.NoError(t, h.Release())

	sem, err := zklock.NewSemaphore(ns, "/sem/n", 2)
	require.NoError(t, err)
	h, err = sem.Acquire(ctx)
	require.NoError(t, err)
	under(h, "/sem/n/leases")
	ps, err := zklock.Participants(ctx, ns, "/sem/n")
	require.NoError(t, err)
	require.Len(t, ps, 1)
	require.Equal(t, h.Node(), ps[0].Path)
	require.NoError(t, h.Release())

	rw, err := zklock.NewRWLock(ns, "/rw")
	require.NoError(t, err)
	h, err = rw.WriteLock().Lock(ctx)
	require.NoError(t, err)
	under(h, "/rw")
	require.NoError(t, h.Release())

	a, b := newMutex(t, ns, "/multi/a"), newMutex(t, ns, "/multi/b")
	ml, err := zklock.NewMultiLock(a, b)
	require.NoError(t, err)
	mh, err := ml.Lock(ctx)
	require.NoError(t, err)
	require.Len(t, children(t, raw.Conn(), "/app/sub/multi/a"), 1)
	require.Len(t, children(t, raw.Conn(), "/app/sub/multi/b"), 1)
	require.NoError(t, mh.Release())

	e, err := zklock.NewLeaderElection(ns, "/elect", "me")
	require.NoError(t, err)
	lh, err := e.Campaign(ctx)
	require.NoError(t, err)
	under(lh, "/elect")
	l, err := e.Leader(ctx)
	require.NoError(t, err)
	require.Equal(t, lh.Node(), l.Path)
	require.Equal(t, "me", l.ID())
	require.NoError(t, lh.Release())

	// Revoke takes the caller's path.
	rm := newMutex(t, ns, "/revocable", zklock.WithRevocable())
	h, err = rm.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, zklock.Revoke(ctx, ns, h.Node()))
	select {
	case <-h.Revoked():
	case <-ctx.Done():
		t.Fatal("revocation through the namespace not seen")
	}
	require.NoError(t, h.Release())

	// A fenced write through the raw connection, with Guard's full path.
	h, err = newMutex(t, ns, "/fenced").Lock(ctx)
	require.NoError(t, err)
	_, err = ns.Conn().Create(ns.FullPath("/fenced-data"), nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	set := func(v string) error {
		_, err := ns.Conn().Multi(h.Guard(), &zk.SetDataRequest{Path: ns.FullPath("/fenced-data"), Data: []byte(v), Version: -1})
		return err
	}
	require.NoError(t, set("v"))
	require.NoError(t, h.Release())
	require.Error(t, set("w"), "a guarded write after release is refused")
	data, _, err = raw.Conn().Get("/app/sub/fenced-data")
	require.NoError(t, err)
	require.Equal(t, "v", string(data))
}

// Our latch and Curator's, both in namespace "app", exclude each other.
func TestIntegration_NamespaceLatchCurator(t *testing.T) {
	t.Parallel()
	peers.Each(t, func(t *testing.T, g *peers.Generation) {
		c := zktest.Start(t)
		ctx := ctxTimeout(t, time.Minute)
		ns := connect(t, c, zklock.WithNamespace("app"))
		raw := connect(t, c)
		l := newLatch(t, ns, "/latch", "go")
		require.NoError(t, l.Start(ctx))
		h, err := l.Await(ctx)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(h.Node(), "/latch/_c_"), h.Node())
		cur := g.CuratorNamespace(t, c.ConnectString(), sessionTimeout, "app")
		cur.Must(t, "latch C /latch curator")
		waitLatchIDs(t, l, "go", "curator")
		require.Equal(t, "go,curator", cur.Must(t, "participants C"))
		require.Len(t, children(t, raw.Conn(), "/app/latch"), 2)
		require.Empty(t, cur.Buffered(), "Curator led while ours did")
		require.NoError(t, l.Close())
		ev, err := cur.WaitEvent(ctxTimeout(t, 20*time.Second), "C", "leader")
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(ev.Arg, "/latch/_c_"), "Curator's path is in its namespace: %s", ev.Arg)
		require.Equal(t, []string{ev.Arg[len("/latch/"):]}, children(t, raw.Conn(), "/app/latch"))
	})
}
