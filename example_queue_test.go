package zklock_test

import (
	"fmt"
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
// which share the acquire's number.
func ExampleWithObserver_spans() {
	started := map[uint64]time.Time{}
	observe := func(ev zklock.Event) {
		switch ev.Kind {
		case zklock.EventAcquiring:
			started[ev.Acquire] = time.Now()
		case zklock.EventAcquired, zklock.EventAcquireFailed:
			fmt.Println(ev.Kind, ev.Path, "after", ev.Wait.Round(time.Second), ev.Err)
			delete(started, ev.Acquire)
		}
	}
	// A session feeds the observer: zklock.Connect(servers, zklock.WithObserver(observe)).
	observe(zklock.Event{Kind: zklock.EventAcquiring, Acquire: 1, Path: "/locks/job"})
	observe(zklock.Event{Kind: zklock.EventAcquireFailed, Acquire: 1, Path: "/locks/job", Wait: 3 * time.Second, Err: zklock.ErrLocked})
	// Output:
	// acquire-failed /locks/job after 3s zklock: locked by another holder
}
