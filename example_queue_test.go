package zklock_test

import (
	"fmt"
	"sync"
	"time"

	"github.com/zklock/zklock"
)

// Queue judges a listing of a lock directory without any I/O: here a
// read-write lock's, with a node that is not a lock node.
func ExampleQueue() {
	children := []string{
		"_c_9d4c5e2a-1b3f-4e5d-8a7b-6c5d4e3f2a1b-__WRIT__0000000003",
		"_c_1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b-__READ__0000000001",
		"config",
		"_c_0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d-__READ__0000000002",
	}
	for _, p := range zklock.Queue("/locks/schema", children) {
		fmt.Printf("%d %s holds=%t waits=%q\n", p.Sequence, p.Kind, p.Holds, p.Waits)
	}
	// Output:
	// 1 read holds=true waits=""
	// 2 read holds=true waits=""
	// 3 write holds=false waits="_c_0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d-__READ__0000000002"
}

// An observer can build a span of each acquire's wait from its events,
// which share the acquire's number. A session calls its observer on the
// goroutine where each event happens, many at once: whatever the observer
// keeps must be safe for concurrent use, here a map under a mutex.
// (contrib/otel records such spans in the caller's trace.)
func ExampleWithObserver_spans() {
	var (
		mu      sync.Mutex
		started = map[uint64]time.Time{} // the acquires under way, guarded by mu
	)
	observe := func(ev zklock.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case zklock.EventAcquiring:
			started[ev.Acquire] = time.Now()
		case zklock.EventAcquired, zklock.EventAcquireFailed:
			if ev.Err != nil {
				fmt.Println(ev.Kind, ev.Path, "after", ev.Wait.Round(time.Second), ev.Err)
			}
			delete(started, ev.Acquire) // the wait span runs from started[ev.Acquire] to now
		}
	}
	// A session feeds the observer: zklock.Connect(servers, zklock.WithObserver(observe)).
	// Here, four acquires on four goroutines, as a session's would be.
	var wg sync.WaitGroup
	for i := range uint64(4) {
		wg.Go(func() {
			observe(zklock.Event{Kind: zklock.EventAcquiring, Acquire: 10 + i, Path: "/locks/job"})
			observe(zklock.Event{Kind: zklock.EventAcquired, Acquire: 10 + i, Path: "/locks/job", Wait: time.Millisecond})
		})
	}
	wg.Wait()
	observe(zklock.Event{Kind: zklock.EventAcquiring, Acquire: 1, Path: "/locks/job"})
	observe(zklock.Event{Kind: zklock.EventAcquireFailed, Acquire: 1, Path: "/locks/job", Wait: 3 * time.Second, Err: zklock.ErrLocked})
	mu.Lock()
	fmt.Println("waits under way:", len(started))
	mu.Unlock()
	// Output:
	// acquire-failed /locks/job after 3s zklock: locked by another holder
	// waits under way: 0
}
