package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// These examples need no ZooKeeper server: go test runs them and checks
// their output.

// Options are checked by Connect before anything is dialled; a bad one is
// an error wrapping ErrInvalidArgument. Connect itself returns at once: the
// session connects in the background (here to a port where nothing
// listens, so it stays connecting).
func ExampleConnect_options() {
	_, err := zklock.Connect(nil)
	fmt.Println(errors.Is(err, zklock.ErrInvalidArgument), err)

	_, err = zklock.Connect([]string{"127.0.0.1:1"}, zklock.WithSessionTimeout(0))
	fmt.Println(errors.Is(err, zklock.ErrInvalidArgument), err)

	sess, err := zklock.Connect([]string{"127.0.0.1:1"},
		zklock.WithSessionTimeout(15*time.Second), // asked of the server; default 10s
		zklock.WithLossLimit(0),                   // suspended = lost (Curator's standard policy)
		zklock.WithRetry(zklock.Backoff{Base: 100 * time.Millisecond, Max: time.Second}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sess.State())
	sess.Close()
	fmt.Println(sess.State())
	// Output:
	// true zklock: invalid argument: no servers
	// true zklock: invalid argument: session timeout 0s: want 100ms to 596h31m23.647s (ZooKeeper's servers then negotiate it into their range, 4s to 40s by default)
	// connecting
	// closed
}

// Every error wraps a sentinel, tested with errors.Is; constructors check
// their arguments before any request is sent.
func Example_errors() {
	sess, err := zklock.Connect([]string{"127.0.0.1:1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()

	_, err = zklock.NewMutex(sess, "locks/relative")
	fmt.Println("relative path:", errors.Is(err, zklock.ErrInvalidPath))

	_, err = zklock.NewSemaphore(sess, "/locks/pool", 0)
	fmt.Println("zero leases:", errors.Is(err, zklock.ErrInvalidArgument))

	_, err = zklock.NewMutex(nil, "/locks/job")
	fmt.Println("nil session:", errors.Is(err, zklock.ErrInvalidArgument))

	var h *zklock.Hold
	fmt.Println("release nothing:", errors.Is(h.Release(), zklock.ErrNotHeld))

	// ErrSessionExpired is also go-zookeeper's own sentinel.
	fmt.Println("expired is zk's:", errors.Is(zklock.ErrSessionExpired, zk.ErrSessionExpired))

	// A loss names its reason: test for ErrLost, then for the reason.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSuspended)) // as a hold's context ends
	cause := context.Cause(ctx)
	fmt.Println("lost:", errors.Is(cause, zklock.ErrLost), "suspended:", errors.Is(cause, zklock.ErrSuspended))
	// Output:
	// relative path: true
	// zero leases: true
	// nil session: true
	// release nothing: true
	// expired is zk's: true
	// lost: true suspended: true
}

// fencedResource keeps the highest fencing token it has accepted, as the
// fencing rule asks of every resource a lock holder writes to (in a real
// resource, durably and in the same atomic step as the data).
type fencedResource struct {
	highest int64
	data    string
}

// write applies the rule: accept a token at least the highest seen (one
// holder writes many times under one token), record it, refuse the rest.
func (r *fencedResource) write(token int64, data string) error {
	if token < r.highest {
		return fmt.Errorf("stale token %d < %d: refused", token, r.highest)
	}
	r.highest, r.data = token, data
	return nil
}

// The fencing rule for the resource a hold protects: hold.Token() is the
// czxid of the holder's node, greater than every earlier holder's, so a
// holder that paused past the loss of its lock is refused once a later
// holder has written.
func Example_fencing() {
	var r fencedResource
	const first, second = 4294967311, 4294967342 // two holders' hold.Token()

	fmt.Println(r.write(first, "a"))     // the first holder
	fmt.Println(r.write(first, "b"))     // the same holder again: equal is fine
	fmt.Println(r.write(second, "c"))    // the next holder, after the first lost the lock
	fmt.Println(r.write(first, "stale")) // the first holder, resumed after a pause
	fmt.Println(r.highest == second, r.data)
	// Output:
	// <nil>
	// <nil>
	// <nil>
	// stale token 4294967311 < 4294967342: refused
	// true c
}

// DefaultBackoff spaces out the library's retries of a request: full jitter
// under a ceiling that doubles from 50ms up to 2s.
func ExampleBackoff_Ceiling() {
	for attempt := range 7 {
		fmt.Print(zklock.DefaultBackoff.Ceiling(attempt), " ")
	}
	fmt.Println()
	// Output: 50ms 100ms 200ms 400ms 800ms 1.6s 2s
}

// ValidatePath is the check every recipe constructor runs.
func ExampleValidatePath() {
	for _, p := range []string{"/locks/job", "locks/job", "/locks/", "/locks//job", "/locks/../job"} {
		fmt.Printf("%-14q %v\n", p, zklock.ValidatePath(p) == nil)
	}
	// Output:
	// "/locks/job"   true
	// "locks/job"    false
	// "/locks/"      false
	// "/locks//job"  false
	// "/locks/../job" false
}
