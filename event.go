package zklock

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// EventKind says what an Event reports.
type EventKind int

const (
	// EventState: the session's State changed.
	EventState EventKind = iota + 1
	// EventAcquired: a lock was acquired (not re-entered); Wait is how long
	// the acquire took.
	EventAcquired
	// EventReleased: a lock's last hold was released; Held is how long it was
	// held.
	EventReleased
	// EventLost: a hold was lost; Err says why, Held how long it was held.
	EventLost
	// EventAcquiring: an acquire started (a re-entry is not one). It ends
	// with EventAcquired or EventAcquireFailed of the same Acquire.
	EventAcquiring
	// EventAcquireFailed: an acquire ended without a hold; Err says why
	// (ErrLocked for a try, the context's cause, ...), Wait how long it
	// took, Node the node it had queued, if any (deleted since).
	EventAcquireFailed
	// EventRetry: a recipe that campaigns by itself (LeaderElection.Run
	// with WithRequeue, a started LeaderLatch) backs off before acquiring
	// again, after an acquire that failed for a reason a new one can get
	// past (Err: a connection problem, an expiry, ...). A term lost and
	// joined again is no retry: its EventLost says so.
	EventRetry
)

func (k EventKind) String() string {
	switch k {
	case EventState:
		return "state"
	case EventAcquired:
		return "acquired"
	case EventReleased:
		return "released"
	case EventLost:
		return "lost"
	case EventAcquiring:
		return "acquiring"
	case EventAcquireFailed:
		return "acquire-failed"
	case EventRetry:
		return "retry"
	}
	return "unknown"
}

// Event is what an observer (see WithObserver) receives. An acquire's
// events share its Acquire number: EventAcquiring, then EventAcquired and
// later EventReleased or EventLost, or else EventAcquireFailed; so a span
// of the wait and one of the hold can be built from them. A semaphore's
// acquire reports its lease, once the semaphore's internal lock is held.
type Event struct {
	Kind    EventKind
	State   State         // EventState: the new state
	Session int64         // EventState: the ZooKeeper session id it refers to
	Acquire uint64        // the acquire's number (unique in the process); 0 for EventState and EventRetry
	Path    string        // the lock path
	Node    string        // the holder's node: its full znode path, namespace included (see WithNamespace)
	Token   int64         // the hold's fencing token
	Wait    time.Duration // EventAcquired, EventAcquireFailed
	Held    time.Duration // EventReleased, EventLost
	Err     error         // EventLost: the cause, wrapping ErrLost; EventAcquireFailed, EventRetry: why
	// Recipe names the recipe of the lock (see the Recipe constants) on
	// every event but EventState.
	Recipe string
	// Cause, on EventReleased, is why the holder released when the library
	// knows it: ErrResigned for a leader's Resign, ErrRevoked for a hold
	// (or a leader's term) whose revocation was asked (WithRevocable);
	// nil for a release the holder chose alone.
	Cause error
	// Context carries the values of the context given to the acquire
	// (Lock, Acquire, Run, ...; a tracer's span, as contrib/otel reads it)
	// on every event of an acquire and its hold, and on EventRetry; nil on
	// EventState. It may be done already: read its values, not its end.
	Context context.Context
}

// acquires numbers the acquires of the process, for Event.Acquire.
var acquires atomic.Uint64

// The recipes Event.Recipe names.
const (
	RecipeMutex     = "mutex"     // Mutex, MultiLock's locks
	RecipeRWLock    = "rwlock"    // RWLock's read and write halves
	RecipeSemaphore = "semaphore" // Semaphore, SemaphoreMutex
	RecipeElection  = "election"  // LeaderElection
	RecipeLatch     = "latch"     // LeaderLatch
)

// State is the liveness of a Session's connection, as the recipes see it.
type State int32

const (
	// StateConnecting: no session has been established yet.
	StateConnecting State = iota
	// StateConnected: a live connection with a session.
	StateConnected
	// StateSuspended: the connection dropped; the session may still be alive
	// on the servers, and go-zookeeper is reconnecting. Holds stay valid until
	// the loss limit (see WithLossLimit).
	StateSuspended
	// StateExpired: the servers expired the session; every node it owned is
	// gone and go-zookeeper is establishing a new session.
	StateExpired
	// StateClosed: Close was called.
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateSuspended:
		return "suspended"
	case StateExpired:
		return "expired"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}
