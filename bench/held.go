package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// heldLocks measures what holding costs: n zklock mutexes on distinct
// paths, all held at once by one session. It reports the heap+stack growth
// per held lock (the Mutex values, their holds and everything the session
// keeps for them, apart from the Mutex values, measured separately) and the
// goroutines left running per held lock once every Lock call has returned. The lock directories are made beforehand in
// batches (multi), so that the run times holding, not directory creation.
func heldLocks(server, dir string, n int) (Record, error) {
	rec := Record{Target: ZklockMutex, Measure: measureHeld, Setup: Standalone, Waiters: n}
	admin, err := connectZK(server)
	if err != nil {
		return rec, err
	}
	defer admin.Close()
	if err := mkdirs(admin, dir); err != nil {
		return rec, err
	}
	path := func(i int) string { return fmt.Sprintf("%s/m-%06d", dir, i) }
	const batch = 1000
	for i := 0; i < n; i += batch {
		var ops []any
		for j := i; j < min(n, i+batch); j++ {
			ops = append(ops, &zk.CreateRequest{Path: path(j), Acl: acl})
		}
		if _, err := admin.Multi(ops...); err != nil {
			return rec, fmt.Errorf("bench: make %d lock directories: %w", n, err)
		}
	}

	s, err := zklock.Connect([]string{server}, zklock.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return rec, err
	}
	defer func() { _ = s.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.WaitConnected(ctx); err != nil {
		return rec, err
	}
	// One lock first, so that whatever a session sets up once is there.
	warm, err := zklock.NewMutex(s, dir+"/warm")
	if err != nil {
		return rec, err
	}
	h, err := warm.Lock(ctx)
	if err != nil {
		return rec, err
	}
	if err := h.Release(); err != nil {
		return rec, err
	}

	holds := make([]*zklock.Hold, n)
	mutexes := make([]*zklock.Mutex, n)
	heapM := heapNow()
	for i := range mutexes {
		if mutexes[i], err = zklock.NewMutex(s, path(i)); err != nil {
			return rec, err
		}
	}
	heap0, gor0 := heapNow(), runtime.NumGoroutine()
	rec.HeapPerMutex = float64(int64(heap0)-int64(heapM)) / float64(n)
	start := time.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 256 { // requests in flight
		wg.Go(func() {
			for i := range next {
				var err error
				if holds[i], err = mutexes[i].Lock(ctx); err != nil {
					mu.Lock()
					first = cmpErr(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	heap1, gor1 := heapNow(), runtime.NumGoroutine()
	if first != nil {
		return rec, first
	}
	rec.Run = &Run{Ops: n, Elapsed: elapsed}
	rec.Run.finish()
	rec.HeapPerHeld = float64(int64(heap1)-int64(heap0)) / float64(n)
	rec.GoroutinesPerHeld = float64(gor1-gor0) / float64(n)

	// Release everything, with as many requests in flight.
	idx := make(chan int)
	var relErr error
	for range 256 {
		wg.Go(func() {
			for i := range idx {
				if err := holds[i].Release(); err != nil {
					mu.Lock()
					relErr = cmpErr(relErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		idx <- i
	}
	close(idx)
	wg.Wait()
	runtime.KeepAlive(mutexes)
	return rec, relErr
}
