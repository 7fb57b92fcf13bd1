// Package zklock provides ZooKeeper lock recipes that are correct under
// faults: a reentrant mutex, a non-reentrant semaphore mutex with the
// counting semaphore it rests on, a read-write lock, an all-or-nothing
// multi-lock, leader election and Curator's leader latch, all
// wire-compatible with Apache Curator (and, where kazoo allows, with kazoo)
// on the same paths, in Curator's namespaces too (WithNamespace).
//
// # Sessions and liveness
//
// Everything starts with a Session, made by Connect. The session owns the
// ZooKeeper connection because go-zookeeper reports session events only to
// the callback given when it connects, and the library needs them to say
// when a lock may be lost. A session is connected, suspended (disconnected,
// the session maybe alive) or expired; see State and WithLossLimit.
//
// The loss limit is a trade-off. The default (two thirds of the session
// timeout) lets a hold survive a server restart, and still tells a holder
// cut off by a partition before the servers can expire it. But when the
// servers end a session while its client is still connected (an operator
// closing it, another client with its credentials), they delete its nodes
// and hand the lock over at once, while the old holder waits out its limit
// or its reconnect. A leader should not act in that window: sessions used
// for leadership should use WithLossLimit(0), which ends every hold the
// moment the connection drops, as Curator's leader recipes do.
//
// # Holds, loss and fencing
//
// A successful Lock returns a *Hold. A hold is valid until it is released
// or lost; its Done channel closes and its Context is cancelled on loss
// (the session expired, the connection stayed suspended past the loss
// limit, or the holder's node was deleted by another client or replaced).
// No lock service can promise that a holder learns of a loss in time (a
// process can pause at any moment), so every hold carries a fencing token,
// the czxid of the holder's node: strictly increasing from holder to holder. A resource protected by the
// lock must accept a write only if its token is at least the highest token
// it has seen, checked and recorded atomically with the write. For data
// kept in ZooKeeper itself, Hold.Guard makes a zk.Conn.Multi apply only
// while the hold's node exists.
//
// # Ownership and reentrancy
//
// Go has no goroutine identity, so a reentrant lock's owner is a context:
// a Hold's Context carries the hold, and Lock called with it (or a context
// derived from it) re-enters instead of queueing. Any other context queues
// as a separate participant, even from the same goroutine. The reentrant
// count is exact: the node is deleted at the last release.
//
// # Queueing
//
// Locks are ephemeral sequential znodes named as Curator names them,
// _c_<uuid>-<name><sequence>, under CONTAINER parents. Each waiter watches
// only the node it must outlive, with a data watch, so only its goroutine
// wakes when that node goes; a handoff costs the same at 10 waiters and at
// 10,000. Every failed or abandoned acquire deletes its node, retrying in
// the background while the connection is down, so a failure never leaves a
// node that blocks the queue.
//
// # Errors
//
// Errors wrap the package's sentinels (ErrLocked, ErrNotHeld, ErrLost, ...)
// and go-zookeeper's errors, for errors.Is. No call returns a nil hold with a
// nil error.
package zklock
