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
// keeps for them, apart from the Mutex values, measured separately) and
// the goroutines left running per held lock once every Lock call has
// returned. The lock directories are made beforehand in batches (multi),
// so that the run times holding, not directory creation.
func heldLocks(server, dir string, n int) (Record, error) {
	rec := Record{Target: ZklockMutex, Measure: measureHeld, Setup: Standalone, Waiters: n}
	admin, err := connectZK(server)
	if err != nil {
		return rec, err
	}
	defer admin.Close()
	if err := makeLockDirs(admin, dir, n); err != nil {
		return rec, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := warmSession(ctx, server, dir)
	if err != nil {
		return rec, err
	}
	defer func() { _ = s.Close() }()
	mutexes, holds, err := holdAll(ctx, s, dir, n, &rec)
	if err != nil {
		return rec, err
	}
	err = releaseAll(holds)
	runtime.KeepAlive(mutexes)
	return rec, err
}

// heldPath is the i-th lock directory below dir.
func heldPath(dir string, i int) string { return fmt.Sprintf("%s/m-%06d", dir, i) }

// makeLockDirs makes dir and n lock directories below it, a thousand to a
// multi request.
func makeLockDirs(admin *zk.Conn, dir string, n int) error {
	if err := mkdirs(admin, dir); err != nil {
		return err
	}
	const batch = 1000
	for i := 0; i < n; i += batch {
		var ops []any
		for j := i; j < min(n, i+batch); j++ {
			ops = append(ops, &zk.CreateRequest{Path: heldPath(dir, j), Acl: acl})
		}
		if _, err := admin.Multi(ops...); err != nil {
			return fmt.Errorf("bench: make %d lock directories: %w", n, err)
		}
	}
	return nil
}

// warmSession connects the holding session and takes and releases one
// lock first, so that whatever a session sets up once is there.
func warmSession(ctx context.Context, server, dir string) (*zklock.Session, error) {
	s, err := connectSession(ctx, server)
	if err != nil {
		return nil, err
	}
	if err := lockOnce(ctx, s, dir+"/warm"); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func lockOnce(ctx context.Context, s *zklock.Session, path string) error {
	m, err := zklock.NewMutex(s, path)
	if err != nil {
		return err
	}
	h, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	return h.Release()
}

// holdAll makes n Mutex values on s and locks them all, 256 Lock calls in
// flight, filling in rec's run and its heap and goroutine figures.
func holdAll(ctx context.Context, s *zklock.Session, dir string, n int, rec *Record) ([]*zklock.Mutex, []*zklock.Hold, error) {
	holds := make([]*zklock.Hold, n)
	mutexes := make([]*zklock.Mutex, n)
	heapM := heapNow()
	for i := range mutexes {
		var err error
		if mutexes[i], err = zklock.NewMutex(s, heldPath(dir, i)); err != nil {
			return nil, nil, err
		}
	}
	heap0, gor0 := heapNow(), runtime.NumGoroutine()
	rec.HeapPerMutex = float64(int64(heap0)-int64(heapM)) / float64(n)
	start := time.Now()
	err := parallel(n, 256, func(i int) (err error) {
		holds[i], err = mutexes[i].Lock(ctx)
		return err
	})
	elapsed := time.Since(start)
	heap1, gor1 := heapNow(), runtime.NumGoroutine()
	if err != nil {
		return nil, nil, err
	}
	rec.Run = &Run{Ops: n, Elapsed: elapsed}
	rec.Run.finish()
	rec.HeapPerHeld = float64(int64(heap1)-int64(heap0)) / float64(n)
	rec.GoroutinesPerHeld = float64(gor1-gor0) / float64(n)
	return mutexes, holds, nil
}

// releaseAll releases every hold, with as many requests in flight.
func releaseAll(holds []*zklock.Hold) error {
	return parallel(len(holds), 256, func(i int) error { return holds[i].Release() })
}

// parallel runs f(0..n-1) on workers goroutines, each taking the next i
// in turn, and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := f(i); err != nil {
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
	return first
}
