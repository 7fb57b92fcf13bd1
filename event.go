package zklock

import (
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
	}
	return "unknown"
}

// Event is what an observer (see WithObserver) receives.
type Event struct {
	Kind    EventKind
	State   State         // EventState: the new state
	Session int64         // EventState: the ZooKeeper session id it refers to
	Path    string        // the lock path
	Node    string        // the holder's node: its full znode path, namespace included (see WithNamespace)
	Token   int64         // the hold's fencing token
	Wait    time.Duration // EventAcquired
	Held    time.Duration // EventReleased, EventLost
	Err     error         // EventLost: the cause, wrapping ErrLost
}
