// Package zklock provides ZooKeeper lock recipes that are correct under
// faults: a reentrant mutex, a non-reentrant semaphore mutex with the
// counting semaphore it rests on, a read-write lock, an all-or-nothing
// multi-lock, leader election and Curator's leader latch, all
// wire-compatible with Apache Curator (and, where kazoo allows, with kazoo)
// on the same paths, in Curator's namespaces too (WithNamespace). What
// each recipe writes to ZooKeeper, and what it excludes, is told in
// docs/protocol.md. Every recipe value is safe for concurrent use.
//
// # Sessions and liveness
//
// Everything starts with a Session, made by Connect, which owns the
// ZooKeeper connection: go-zookeeper reports session events only to the
// callback given when it connects, and they tell when a lock may be lost.
// A session is connected, suspended (disconnected, the session maybe
// alive) or expired; see State.
//
// # The loss limit
//
// WithLossLimit sets how long a suspension may last, counted from when a
// server was last heard from, before every hold of the session is lost:
// by default two thirds of the negotiated session timeout; 0 at the first
// suspension (Curator's "standard" policy; use it for leadership); a
// negative limit only at expiry (Curator's "session" policy; use it only
// with fencing). docs/protocol.md#choosing-the-loss-limit weighs them.
//
// # Holds, loss and fencing
//
// A successful Lock returns a *Hold, valid until it is released or lost:
// its Done channel closes and its Context is cancelled on loss (the
// session expired, the connection stayed suspended past the loss limit, or
// another client deleted or replaced the holder's node). No lock service
// can promise that a holder learns of a loss in time (a process can pause
// at any moment), so every hold carries a fencing token, the czxid of its
// node, strictly increasing from holder to holder. A resource the lock
// protects must accept a write only if its token is at least the highest
// it has seen, checked and recorded atomically with the write; for data in
// ZooKeeper, Hold.Guard makes a zk.Conn.Multi apply only while the hold's
// node exists.
//
// # Ownership and queueing
//
// Go has no goroutine identity, so a reentrant lock's owner is a context:
// a Hold's Context carries the hold, and Lock called with it (or a context
// derived from it) re-enters instead of queueing. Any other context queues
// as a separate participant, even from the same goroutine. The reentrant
// count is exact: the node is deleted at the last release. Each waiter
// watches only the node it must outlive, so a handoff costs the same at 10
// waiters and at 10,000. Every failed or abandoned acquire deletes its
// node, retrying in the background while the connection is down, so a
// failure never leaves a node that blocks the queue.
//
// # Errors
//
// Errors wrap the package's sentinels (ErrLocked, ErrNotHeld, ErrLost, ...)
// and go-zookeeper's errors, for errors.Is. No call returns a nil hold with a
// nil error.
//
// ErrUnreachable means no member could be reached: no connection, or no
// answer to the handshake within its bound. Anything after a server
// answered is its own error and never ErrUnreachable: a reply over the
// session's bound (ErrReplyTooLong, which fails that request alone; see
// WithMaxReply), a server that breaks the protocol (ErrProtocol), refused
// credentials (ErrNotAuthorized), a refused TLS handshake or a peer that is
// not ZooKeeper. WithFailOpen runs without the lock on ErrUnreachable only.
// A peer that accepts the connection and never answers cannot be told from
// a hung server: it is unreachable.
package zklock
