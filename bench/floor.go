package bench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// floorHandoff measures the least a handoff can cost: a chain of n
// ephemeral nodes owned alternately by two sessions, each node's owner
// watching the node before it. The first owner deletes its node; every
// deletion notifies the other session, which deletes its next node at once.
// Nodes and watches are all in place before the clock starts, so a handoff
// is exactly one delete (a logged write) and one watch notification.
// Ops is the number of handoffs (n-1); Lat holds each handoff's time from
// the previous deletion's reply to this one's.
func floorHandoff(server, dir string, n int) (Run, error) {
	var conns [2]*zk.Conn
	for i := range conns {
		c, err := connectZK(server)
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
