package lockview_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

// heldNode is the name of the holder's node fill gives a directory: a
// Curator/zklock mutex node (the sequence suffix is ZooKeeper's).
const heldNode = "_c_00000000-0000-4000-8000-000000000000-lock-"

// fill creates, in multi batches of 1,000, the znodes nodes adds (a
// parent before its children): persistent, or ephemeral-sequential when
// seq. ZooKeeper takes 5-10 s for 100,000.
func fill(tb testing.TB, conn *zk.Conn, nodes func(add func(p string, data []byte, seq bool))) {
	tb.Helper()
	acl := zk.WorldACL(zk.PermAll)
	ops := make([]any, 0, 1000)
	flush := func() {
		if len(ops) > 0 {
			_, err := conn.Multi(ops...)
			require.NoError(tb, err)
			ops = ops[:0]
		}
	}
	nodes(func(p string, data []byte, seq bool) {
		var flags int32
		if seq {
			flags = zk.FlagEphemeral | zk.FlagSequence
		}
		ops = append(ops, &zk.CreateRequest{Path: p, Data: data, Acl: acl, Flags: flags})
		if len(ops) == cap(ops) {
			flush()
		}
	})
	flush()
}

// walk starts a view of /locks with cfg and returns it with the time its
// first walk took (bounded by newView).
func walk(t *testing.T, s *zklock.Session, cfg lockview.Config) (*lockview.View, time.Duration) {
	t.Helper()
	cfg.Root = "/locks"
	start := time.Now()
	v := newView(t, s, cfg)
	return v, time.Since(start)
}

// heapMiB is the live heap after a collection, in MiB.
func heapMiB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// A lock directory of 100,000 children that are not lock nodes (24-byte
// names), with a holder and a waiter, is shown as one lock with its holder
// and its waiter, its other children counted; they are not walked: the
// view lists a handful of directories, not one per child, and says nothing
// was left out.
func TestIntegration_LargeLockDirectory(t *testing.T) {
	c := zktest.Start(t)
	conn := c.Connect(t, 20*time.Second)
	_, err := conn.Create("/locks", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create("/locks/big", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	start := time.Now()
	fill(t, conn, func(add func(string, []byte, bool)) {
		for i := range 100_000 {
			add(fmt.Sprintf("/locks/big/entry-%018x", i), nil, false)
		}
	})
	t.Logf("made 100,000 children in %v", time.Since(start))
	s := connect(t, c)
	m, err := zklock.NewMutex(s, "/locks/big", zklock.WithData([]byte("holder-1")))
	require.NoError(t, err)
	start = time.Now()
	h := hold(t, m)
	t.Logf("acquired in %v", time.Since(start))
	w, err := zklock.NewMutex(connect(t, c), "/locks/big", zklock.WithData([]byte("waiter-1")))
	require.NoError(t, err)
	waiting := make(chan struct{})
	go func() {
		defer close(waiting)
		if h, err := w.Lock(ctxT(t, time.Minute)); err == nil {
			_ = h.Release()
		}
	}()
	t.Cleanup(func() { <-waiting })
	t.Cleanup(func() { _ = h.Release() })
	require.Eventually(t, func() bool {
		cs, _, err := conn.Children("/locks/big")
		return err == nil && len(cs) == 100_002
	}, 20*time.Second, 10*time.Millisecond, "the waiter's node")

	p := c.Proxy(t)
	vs, err := zklock.Connect(c.Servers(), zklock.WithDialer(p.Dialer()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = vs.Close() })
	require.NoError(t, vs.WaitConnected(ctxT(t, 20*time.Second)))
	p.ResetCounts()
	v, took := walk(t, vs, lockview.Config{})
	listed := p.Requests()[opGetChildren]
	t.Logf("walked in %v with %d listings", took, listed)

	l := lockAt(t, v, "/locks/big", func(l lockview.Lock) bool { return l.Waiting == 1 })
	require.Len(t, l.Holders, 1)
	require.Equal(t, "holder-1", l.Holders[0].ID)
	require.Equal(t, h.Token(), l.Token)
	require.Equal(t, 100_000, l.Others)
	require.Empty(t, l.Problem)
	o := v.Overview("")
	require.Len(t, o.Locks, 1)
	require.Zero(t, o.NotShown)
	require.NotContains(t, o.Problem, "not shown")
	require.LessOrEqual(t, listed, 10, "the children of a lock directory are not walked")
}

// manyDirs starts a server with 100,000 lock directories under /locks
// (d000000 to d099999, every 100th with a holder's node), and returns a
// session connected through a proxy that counts its requests.
func manyDirs(tb testing.TB) (*zklock.Session, *zktest.Proxy) {
	c := zktest.Start(tb)
	conn := c.Connect(tb, 20*time.Second)
	_, err := conn.Create("/locks", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(tb, err)
	start := time.Now()
	fill(tb, conn, func(add func(string, []byte, bool)) {
		for i := range 100_000 {
			add(fmt.Sprintf("/locks/d%06d", i), nil, false)
			if i%100 == 0 {
				add(fmt.Sprintf("/locks/d%06d/%s", i, heldNode), []byte("holder"), true)
			}
		}
	})
	tb.Logf("made 100,000 directories and 1,000 holders in %v", time.Since(start))
	_, stat, err := conn.Exists("/locks")
	require.NoError(tb, err)
	require.EqualValues(tb, 100_000, stat.NumChildren)

	p := c.Proxy(tb)
	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(p.Dialer()))
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = s.Close() })
	require.NoError(tb, s.WaitConnected(ctxT(tb, 20*time.Second)))
	return s, p
}

// A root of 100,000 lock directories: the view watches at most MaxDirs
// of them (the default), the first by name, and the overview, its JSON and
// its page say how many more were found and not shown. The walk costs one
// listing per watched directory, not one per directory.
func TestIntegration_ManyLockDirectories(t *testing.T) {
	s, p := manyDirs(t)
	before := heapMiB()
	p.ResetCounts()
	v, took := walk(t, s, lockview.Config{})
	listed := p.Requests()[opGetChildren]
	t.Logf("MaxDirs %d: walked in %v with %d listings; heap %+.1f MiB", lockview.DefaultMaxDirs, took, listed, heapMiB()-before)
	require.Equal(t, 2000, lockview.DefaultMaxDirs)
	require.LessOrEqual(t, listed, 2000+1+100, "one listing per watched directory (a few again)")

	o := v.Overview("")
	var want, got []string
	for i := range 20 {
		want = append(want, fmt.Sprintf("/locks/d%06d", i*100))
	}
	for _, l := range o.Locks {
		got = append(got, l.Path)
		require.Len(t, l.Holders, 1, l.Path)
	}
	require.Equal(t, want, got, "the first 2,000 directories by name, every 100th held")
	require.Equal(t, 98_000, o.NotShown)
	say := "98,000 more directories under /locks not shown"
	require.Contains(t, o.Problem, say)

	srv := serve(t, v, false)
	code, body := get(t, srv.URL+"/api/locks")
	require.Equal(t, http.StatusOK, code)
	var api lockview.Overview
	require.NoError(t, json.Unmarshal([]byte(body), &api))
	require.Equal(t, 98_000, api.NotShown)
	require.Len(t, api.Locks, 20)
	require.Contains(t, body, `"dirs_not_shown": 98000`)
	code, body = get(t, srv.URL+"/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, say)
	require.Contains(t, body, `20 locks, 20 held, 0 waiting; <span class="warn">98,000 more directories not shown</span>`)
}

// BenchmarkManyLockDirectories measures the first walk of a root of
// 100,000 lock directories with MaxDirs 2,000 (the default) and 20,000:
// its time, its listings and the view's heap. It runs once:
//
//	go test -run '^$' -bench ManyLockDirectories -benchtime 1x ./cmd/zklock/internal/lockview
func BenchmarkManyLockDirectories(b *testing.B) {
	s, p := manyDirs(b)
	for _, maxDirs := range []int{2000, 20_000} {
		b.Run(fmt.Sprint(maxDirs), func(b *testing.B) {
			for b.Loop() {
				before := heapMiB()
				p.ResetCounts()
				start := time.Now()
				v, err := lockview.New(s, lockview.Config{Root: "/locks", MaxDirs: maxDirs})
				require.NoError(b, err)
				select {
				case <-v.Ready():
				case <-time.After(2 * time.Minute):
					b.Fatal("the view's first walk did not end")
				}
				b.ReportMetric(time.Since(start).Seconds(), "walk-s")
				b.ReportMetric(float64(p.Requests()[opGetChildren]), "listings")
				b.ReportMetric(heapMiB()-before, "heap-MiB")
				b.ReportMetric(float64(v.Overview("").NotShown), "not-shown")
				v.Close()
			}
		})
	}
}

// thousands writes n with commas: 98,001.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
