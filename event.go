package zklock

import (
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
	Acquire uint64        // the acquire's number (unique in the process); 0 for EventState
	Path    string        // the lock path
	Node    string        // the holder's node: its full znode path, namespace included (see WithNamespace)
	Token   int64         // the hold's fencing token
	Wait    time.Duration // EventAcquired, EventAcquireFailed
	Held    time.Duration // EventReleased, EventLost
	Err     error         // EventLost: the cause, wrapping ErrLost; EventAcquireFailed: why
}

// acquires numbers the acquires of the process, for Event.Acquire.
var acquires atomic.Uint64

// started reports w's acquire as begun, numbering it.
func (q *queue) started(w *waiter) {
	w.id = acquires.Add(1)
	if !q.internal {
		q.s.observe(Event{Kind: EventAcquiring, Acquire: w.id, Path: q.path})
	}
}

// failed reports the end of w's acquire with w.err. An acquire whose hold
// was registered before it failed (a latch's or election's confirmation
// found the node gone) reports the hold lost instead, so that every
// EventAcquired is followed by EventReleased or EventLost.
func (q *queue) failed(w *waiter) {
	if q.internal {
		return
	}
	ev := Event{Kind: EventAcquireFailed, Acquire: w.id, Path: q.path, Wait: time.Since(w.start), Err: w.err}
	if w.e != nil {
		ev.Node = w.e.node()
	}
	if w.registered {
		ev.Kind, ev.Wait, ev.Err = EventLost, 0, fmt.Errorf("%w: %w", ErrLost, w.err)
	}
	q.s.observe(ev)
}

// refused reports a try that found the lock taken before it wrote
// anything: an acquire that starts and fails at once.
func (q *queue) refused(err error) {
	if q.internal {
		return
	}
	id := acquires.Add(1)
	q.s.observe(Event{Kind: EventAcquiring, Acquire: id, Path: q.path})
	q.s.observe(Event{Kind: EventAcquireFailed, Acquire: id, Path: q.path, Err: err})
}
