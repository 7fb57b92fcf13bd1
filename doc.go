// Package zklock provides ZooKeeper lock recipes that are correct under
// faults: a reentrant mutex, a non-reentrant semaphore mutex with the
// counting semaphore it rests on, a read-write lock, an all-or-nothing
// multi-lock, leader election, Curator's leader latch and scheduled ticks,
// all wire-compatible with Apache Curator (and, where kazoo allows, with
// kazoo) on the same paths and namespaces. docs/protocol.md tells what each
// recipe writes and excludes. Every recipe value is safe for concurrent use.
//
// # Sessions and the loss limit
//
// Everything starts with a Session, made by Connect, which owns the
// ZooKeeper connection. A session is connected, suspended (disconnected,
// maybe alive) or expired; see State. WithLossLimit sets how long a
// suspension may last before every hold of the session is lost: by default
// two thirds of the negotiated session timeout; 0 at the first suspension
// (use it for leadership); negative only at expiry (use it only with
// fencing). docs/protocol.md#choosing-the-loss-limit weighs them.
//
// # Holds, loss and fencing
//
// A successful Lock returns a *Hold, valid until it is released or lost:
// its Done channel closes and its Context is cancelled on loss (expiry, a
// suspension past the loss limit, or another client deleting or replacing
// its node). A holder may learn of a loss too late, so every hold carries a
// fencing token, the czxid of its node, strictly increasing from holder to
// holder; see package fence, Hold.Guard and docs/protocol.md#the-fencing-token.
//
// # Ownership and queueing
//
// A reentrant lock's owner is a context: Lock called with a Hold's Context,
// or one derived from it, re-enters; any other context queues as a separate
// participant, even from the same goroutine. Each waiter watches only the
// node it must outlive. A failed or abandoned acquire deletes its node,
// retrying in the background while the connection is down.
//
// # Errors
//
// Errors wrap the package's sentinels (ErrLocked, ErrNotHeld, ErrLost, ...)
// and go-zookeeper's errors, for errors.Is. No call returns a nil hold with a
// nil error. ErrUnreachable means no member could be reached: anything after
// a server answered is its own error (ErrReplyTooLong, ErrProtocol,
// ErrNotAuthorized, ErrTLSHandshake, ErrNotZooKeeper), and WithFailOpen runs
// without the lock on ErrUnreachable only (docs/protocol.md#what-unreachable-means).
package zklock
