package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// herd queues n waiters behind a holder, all on one session through a
// counting relay, then releases and lets every waiter take the lock once:
// n handoffs, whose requests and watch notifications the relay counts.
func herd(srv Server, observer *zk.Conn, name string, h herder, n int) (Record, error) {
	rl, err := newRelay(srv.Addr)
	if err != nil {
		return Record{}, err
	}
	defer rl.Close()
	path := fmt.Sprintf("/bench/%s/herd%d", name, n)
	defer h.HerdClose()
	if err := h.HerdPrepare(rl.Addr(), path, n); err != nil {
		return Record{}, err
	}
	if err := waitQueued(srv, observer, path, n); err != nil {
		return Record{}, err
	}
	rec := Record{Target: name, Measure: measureHerd, Setup: Standalone, Waiters: n}
	if g, ok := h.(*goTarget); ok {
		rec.HeapPerWaiter = g.HeapPerWaiter(n)
	}
	rl.Reset()
	elapsed, err := h.HerdGo()
	if err != nil {
		return Record{}, err
	}
	reqs, total, notifs := rl.Counts()
	rec.Run = &Run{Ops: n, Elapsed: elapsed}
	rec.Run.finish()
	rec.Requests = map[string]int{}
	for op, c := range reqs {
		rec.Requests[opName(op)] = c
	}
	rec.RequestsPerHandoff = float64(total) / float64(n)
	rec.NotificationsPerHandoff = float64(notifs) / float64(n)
	return rec, nil
}

// waitQueued waits until path has the holder and n waiters and the server
// holds at least n watches, i.e. every waiter is asleep on its watch.
func waitQueued(srv Server, observer *zk.Conn, path string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	children, watches := -1, -1
	for {
		if cs, _, err := observer.Children(path); err == nil {
			children = len(cs)
		}
		if children == n+1 && srv.FourLetter != nil {
			if out, err := srv.FourLetter("wchs"); err == nil {
				watches = totalWatches(out)
			}
		}
		if children == n+1 && (srv.FourLetter == nil || watches >= n) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: %s: %d of %d nodes, %d watches: %w", path, children, n+1, watches, ctx.Err())
		case <-tick.C:
		}
	}
}

// totalWatches parses "Total watches:N" from wchs.
func totalWatches(out string) int {
	_, rest, ok := strings.Cut(out, "Total watches:")
	if !ok {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	if err != nil {
		return -1
	}
	return n
}

// herdTarget: the recipes whose nodes are direct children of the lock path
// (a semaphore mutex keeps them in locks/ and leases/ below it).
func herdTarget(name string) bool {
	return !floor(name) && !strings.HasSuffix(name, "-semmutex")
}
