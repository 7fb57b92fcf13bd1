package bench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// floorHandoff is the bare delete→watch floor, the least a handoff can
// cost: a chain of n ephemeral nodes owned alternately by two sessions
// (on servers[0] and servers[1%len]), each node's owner watching the node
// before it. The first owner deletes its node; every deletion notifies the
// other session, which deletes its next node at once. Nodes and watches are
// all in place before the clock starts, so a handoff is exactly one delete
// (a logged write) and one watch notification: one round trip. Ops is the
// number of handoffs (n-1); Lat holds each handoff's time from the previous
// deletion's reply to this one's.
func floorHandoff(servers []string, dir string, n int) (Run, error) {
	return chain(servers, dir, n, false)
}

// floorListed is the listed-handoff floor, the least a fair and safe
// handoff across sessions can cost: floorHandoff's chain, but the notified
// session lists the directory (getChildren, as a waiter must to know it is
// first) before it holds and deletes its node. Delete, notification,
// listing: two round trips per handoff, no lock logic.
func floorListed(servers []string, dir string, n int) (Run, error) {
	return chain(servers, dir, n, true)
}

func chain(servers []string, dir string, n int, list bool) (Run, error) {
	var conns [2]*zk.Conn
	for i := range conns {
		c, err := connectZK(servers[i%len(servers)])
		if err != nil {
			return Run{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	if err := mkdirs(conns[0], dir); err != nil {
		return Run{}, err
	}
	node := func(i int) string { return fmt.Sprintf("%s/n-%06d", dir, i) }
	// Create the chain with a few requests in flight.
	if err := parallel(n, func(i int) error {
		_, err := conns[i%2].Create(node(i), nil, zk.FlagEphemeral, acl)
		return err
	}); err != nil {
		return Run{}, err
	}
	// On an ensemble the other session's server may not have applied every
	// create yet; a sync makes it catch up.
	if _, err := conns[1].Sync(dir); err != nil {
		return Run{}, err
	}
	watches := make([]<-chan zk.Event, n)
	if err := parallel(n-1, func(i int) error {
		ok, _, ch, err := conns[(i+1)%2].ExistsW(node(i))
		if err == nil && !ok {
			err = fmt.Errorf("bench: %s vanished", node(i))
		}
		watches[i+1] = ch
		return err
	}); err != nil {
		return Run{}, err
	}
	done := make([]time.Time, n)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := time.Now()
	for side := range 2 {
		wg.Go(func() {
			for i := side; i < n; i += 2 {
				if i > 0 {
					if ev := <-watches[i]; ev.Type != zk.EventNodeDeleted {
						errs[side] = fmt.Errorf("bench: watch on %s: %v %v", node(i-1), ev.Type, ev.Err)
						return
					}
					if list {
						if _, _, err := conns[side].Children(dir); err != nil {
							errs[side] = err
							return
						}
					}
				}
				if err := conns[side].Delete(node(i), -1); err != nil {
					errs[side] = err
					return
				}
				done[i] = time.Now()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Run{}, err
	}
	r := Run{Ops: n - 1, Elapsed: done[n-1].Sub(start)}
	for i := 1; i < n; i++ {
		r.Lat = append(r.Lat, done[i].Sub(done[i-1]))
	}
	r.finish()
	return r, nil
}

// parallel runs f(0..n-1) with at most 32 calls in flight and returns the
// first error.
func parallel(n int, f func(i int) error) error {
	sem := make(chan struct{}, 32)
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}
