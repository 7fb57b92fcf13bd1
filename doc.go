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
// While the connection is suspended, no one can tell whether the servers
// still keep the session's nodes. WithLossLimit sets how long a suspension
// may last, counted from when a server was last heard from, before every
// hold of the session is declared lost. The longer the limit, the fewer
// holds a server restart or failover ends; the shorter, the safer under a
// partition or a paused process (docs/protocol.md#choosing-the-loss-limit).
//
//   - The default, two thirds of the negotiated session timeout (when
//     go-zookeeper gives up on a silent connection), tells a partitioned
//     holder at least a third of a timeout before its session can expire,
//     and keeps the locks of a holder that reconnects within the limit.
//   - 0 ends every hold the moment the connection drops (Curator's
//     default "standard" policy): safest, but a server restart or a
//     leader election loses every lock.
//   - A negative limit ends holds only when the session expires (Curator's
//     "session" policy): a partitioned or paused holder learns of its loss
//     only when it reaches a server again, long after another may have
//     taken the lock. Use it only with fencing.
//
// Servers that end a session while its client is still connected (an
// operator, another client with its credentials) hand its locks over at
// once, while the old holder waits out its limit: sessions used for
// leadership should use WithLossLimit(0), as Curator's leader recipes do.
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
