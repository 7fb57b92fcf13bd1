package lockview_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

// Request opcodes of the ZooKeeper protocol, as the proxy counts them.
const (
	opGetData     = 4
	opGetChildren = 12
	opExists      = 3
	opPing        = 11
)

// BenchmarkCost measures what the view costs ZooKeeper and the process
// with 1,000 lock directories (one holder each) under the root and 10
// overview pages open (event streams read to the end), with the ensemble
// panel and client addresses on (srvr and cons every 10s, as zklock ui):
// the requests per second its session sends at rest and under churn (a
// waiter node created and deleted in a random directory every 10ms), the
// updates the pages got, and its heap and goroutines. It runs once,
// bounded (about 30s):
//
//	go test -run '^$' -bench Cost -benchtime 1x ./internal/lockview
func BenchmarkCost(b *testing.B) {
	const dirs, pages = 1000, 10
	phase := 5 * time.Second
	c := zktest.Start(b)
	conn := c.Connect(b, 20*time.Second)
	makeLocks(b, conn, dirs)

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()

	p := c.Proxy(b)
	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(p.Dialer()), zklock.WithSessionTimeout(20*time.Second))
	require.NoError(b, err)
	b.Cleanup(func() { _ = s.Close() })
	require.NoError(b, s.WaitConnected(ctxT(b, 20*time.Second)))
	start := time.Now()
	v := newView(b, s, lockview.Config{Root: "/locks", Members: c.Servers()})
	walk := time.Since(start)
	require.Len(b, v.Overview("").Locks, dirs)
	walkReqs := total(p.Requests())

	srv := serve(b, v, false).URL
	var updates atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() { cancel(); wg.Wait() })
	for range pages {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv+"/events?view=overview", nil)
		require.NoError(b, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		wg.Go(func() {
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				if sc.Text() == "event: update" {
					updates.Add(1)
				}
			}
		})
	}
	require.Eventually(b, func() bool { return updates.Load() >= int64(pages) }, 20*time.Second, time.Millisecond,
		"the first update of each page")

	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)

	p.ResetCounts()
	u0 := updates.Load()
	time.Sleep(phase) // the measured window at rest, not a synchronisation
	rest := p.Requests()
	restUpdates := updates.Load() - u0

	p.ResetCounts()
	u0 = updates.Load()
	changes := churn(b, conn, dirs, phase)
	busy := p.Requests()
	busyUpdates := updates.Load() - u0

	sec := phase.Seconds()
	b.ReportMetric(walk.Seconds(), "walk-s")
	b.ReportMetric(float64(walkReqs), "walk-requests")
	b.ReportMetric(float64(total(rest)-rest[opPing])/sec, "rest-req/s")
	b.ReportMetric(float64(rest[opPing])/sec, "rest-pings/s")
	b.ReportMetric(float64(restUpdates)/sec, "rest-updates/s")
	b.ReportMetric(float64(changes)/sec, "churn-changes/s")
	b.ReportMetric(float64(total(busy)-busy[opPing])/sec, "churn-req/s")
	b.ReportMetric(float64(busy[opGetChildren])/sec, "churn-getchildren/s")
	b.ReportMetric(float64(busy[opGetData])/sec, "churn-getdata/s")
	b.ReportMetric(float64(busyUpdates)/sec, "churn-updates/s")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(runtime.NumGoroutine()-goroutines), "goroutines")
	b.Logf("rest: %v; churn: %v (opcodes: 3 exists, 4 getData, 11 ping, 12 getChildren2)", rest, busy)
}

// makeLocks creates n lock directories under /locks, each with one
// holder's node (owned by conn's session).
func makeLocks(tb testing.TB, conn *zk.Conn, n int) {
	acl := zk.WorldACL(zk.PermAll)
	_, err := conn.Create("/locks", nil, 0, acl)
	require.NoError(tb, err)
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := range work {
				dir := fmt.Sprintf("/locks/job-%04d", i)
				if _, err := conn.Create(dir, nil, 0, acl); err != nil {
					errs <- err
					continue
				}
				if _, err := conn.Create(dir+"/_c_00000000-0000-4000-8000-000000000000-lock-", []byte("holder"), zk.FlagEphemeral|zk.FlagSequence, acl); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(tb, err)
	}
}

// churn queues and removes a waiter's node in a random directory every
// 10ms for d, and returns the number of changes (each a create or a
// delete).
func churn(tb testing.TB, conn *zk.Conn, dirs int, d time.Duration) int {
	acl := zk.WorldACL(zk.PermAll)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	end := time.After(d)
	changes := 0
	for {
		select {
		case <-end:
			return changes
		case <-tick.C:
		}
		dir := fmt.Sprintf("/locks/job-%04d", rand.IntN(dirs))
		node, err := conn.Create(dir+"/_c_11111111-1111-4111-8111-111111111111-lock-", []byte("waiter"), zk.FlagEphemeral|zk.FlagSequence, acl)
		require.NoError(tb, err)
		require.NoError(tb, conn.Delete(node, -1))
		changes += 2
	}
}

func total(m map[int32]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}
