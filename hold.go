package zklock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// A Hold is one successful acquisition of a lock. Each Lock or TryLock that
// succeeds returns its own Hold, and each Hold is released exactly once.
//
// A Hold is valid until it is released or lost, whichever comes first. Loss
// means the lock may now belong to someone else: the session expired, the
// connection stayed suspended past the session's loss limit (WithLossLimit),
// another client deleted the holder's node (ErrNodeDeleted, within one
// notification: the session watches every hold's node), or the node was
// found missing or owned by another session after a reconnect (ErrNodeGone).
// Release is never reported as a loss. On loss, Done closes and Err
// explains; stop acting on the lock's behalf, and fence every write with
// Token so that a holder which learns of its loss too late is still refused
// by the resource.
//
// The hold's Context carries the hold: passing it (or a context derived from
// it) to Lock on the same lock re-enters instead of queueing, which is how a
// reentrant lock knows its owner in Go, where goroutines have no identity.
// Goroutines that must exclude each other must not share a hold's context.
type Hold struct {
	h        *hold
	released atomic.Bool
	unlocked bool // a WithFailOpen stand-in: no node, nothing to delete
}

// hold is the state shared by all reentrant Holds of one acquisition.
type hold struct {
	s        *Session
	key      any    // its queue's key (a holdKey)
	path     string // the lock path
	node     string // our node's full path
	token    int64  // the fencing token: our node's czxid, or a downgraded write hold's
	czxid    int64  // our node's czxid
	sid      int64  // the session that owns our node
	acquire  uint64 // the acquire's number, for Event.Acquire
	acquired time.Time
	ctx      context.Context
	cancel   context.CancelCauseFunc
	onEnd    func() // the recipe's own clean-up at the last release or loss

	revoked    chan struct{} // closed when revocation is requested; nil if not revocable
	revokeSeen bool          // revoked is closed (under mu)
	handoff    bool          // an exclusive queue: releasing hands the lock to a local successor
	internal   bool          // the library's own (a semaphore's internal lock): no events

	mu    sync.Mutex
	count int
	ended bool
	err   error
}

// holdKey identifies a lock within a session for re-entry: the same lock
// directory and node kind.
type holdKey struct {
	s    *Session
	dir  string
	mark string
}

// newHold registers a fresh acquisition with the session's liveness model.
func (s *Session) newHold(ctx context.Context, q *queue, e *entry, start time.Time, acquire uint64) (*Hold, error) {
	h := &hold{
		s: s, key: q.key, path: q.path,
		node: e.node(), token: e.stat.Czxid, czxid: e.stat.Czxid, sid: e.stat.EphemeralOwner, acquire: acquire,
		acquired: time.Now(), count: 1, handoff: q.jump, internal: q.internal,
	}
	if q.token != 0 {
		h.token = q.token
	}
	h.ctx, h.cancel = context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), h.key, h))
	if q.cfg.revocable {
		h.revoked = make(chan struct{})
	}
	if err := s.register(h); err != nil {
		h.cancel(err)
		return nil, err
	}
	if !q.confirm && !q.internal { // a confirmed hold's watch comes with its confirmation
		s.watchNode(h)
	}
	s.log.Debug("zklock: acquired", "path", q.path, "node", h.node, "token", h.token)
	if !h.internal {
		s.observe(Event{Kind: EventAcquired, Acquire: acquire, Path: q.path, Node: h.node, Token: h.token, Wait: time.Since(start)})
	}
	return &Hold{h: h}, nil
}

// reenter returns a new Hold on the acquisition that ctx carries for key,
// or nil if ctx carries none.
func reenter(ctx context.Context, key any) (*Hold, error) {
	h, ok := ctx.Value(key).(*hold)
	if !ok {
		return nil, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return nil, fmt.Errorf("%w: %w", ErrNotHeld, h.err)
	}
	h.count++
	return &Hold{h: h}, nil
}

// end marks the acquisition over with err as its cause, once; it reports
// whether this call ended it.
func (h *hold) end(err error) bool {
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return false
	}
	h.ended, h.err = true, err
	h.mu.Unlock()
	h.finish()
	return true
}

// finish cancels the hold's context and runs the recipe's clean-up; the
// caller has marked the hold ended.
func (h *hold) finish() {
	h.cancel(h.err)
	if h.onEnd != nil {
		h.onEnd()
	}
}

// Context returns a context that is cancelled when the hold is lost or its
// last reentrant level is released; context.Cause then wraps ErrLost or
// ErrReleased. It carries the values of the context given to Lock, minus its
// cancellation and deadline, so a deadline meant for the wait does not end
// the hold.
func (h *Hold) Context() context.Context { return h.h.ctx }

// Done returns a channel closed when the hold ends: lost or fully released.
func (h *Hold) Done() <-chan struct{} { return h.h.ctx.Done() }

// Err returns nil while the hold is valid; afterwards an error wrapping
// ErrLost (with the reason) or ErrReleased.
func (h *Hold) Err() error {
	if h.h.ctx.Err() == nil {
		return nil
	}
	return context.Cause(h.h.ctx)
}

// Token returns the fencing token: the czxid of the holder's node, strictly
// greater than every earlier holder's token on this lock and the same for
// reentrant holds. A resource accepts a write iff its token is at least the
// highest it has seen, checked and recorded atomically with the write.
func (h *Hold) Token() int64 { return h.h.token }

// Node returns the path of the holder's node as the caller sees it: under
// the lock path, without the session's namespace (see WithNamespace).
func (h *Hold) Node() string { return h.h.s.callerPath(h.h.node) }

// Path returns the lock path, as given to the recipe.
func (h *Hold) Path() string { return h.h.path }

// SessionID returns the ZooKeeper session that owns the holder's node.
func (h *Hold) SessionID() int64 { return h.h.sid }

// Guard returns a check on the holder's node for zk.Conn.Multi: a multi
// that includes it applies only while the node exists, so a write to
// ZooKeeper made under the lock is refused once the lock is gone. It names
// the node's full znode path, the session's namespace included (the raw
// connection knows no namespace), so the paths of the other operations in
// the multi must be full too (Session.FullPath):
//
//	_, err := sess.Conn().Multi(hold.Guard(), &zk.SetDataRequest{Path: p, Data: d, Version: -1})
func (h *Hold) Guard() *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: h.h.node, Version: -1}
}

func (h *Hold) String() string {
	return fmt.Sprintf("zklock.Hold{node: %s, token: %d}", h.Node(), h.h.token)
}

// Release gives up this hold. The node is deleted when the last reentrant
// hold of the acquisition is released. Releasing a Hold twice returns
// ErrNotHeld; releasing a lost hold returns its loss error. If the delete
// fails on a connection problem, Release returns the error and the session
// keeps deleting the node in the background until it succeeds or the session
// ends; the hold is over either way. Release does not wait for a dead
// connection: if the session is not connected, it returns at once with an
// error wrapping ErrUnreachable and the node is deleted in the background.
func (h *Hold) Release() error {
	if h == nil || h.h == nil || !h.released.CompareAndSwap(false, true) {
		return ErrNotHeld
	}
	st := h.h
	if h.unlocked {
		st.end(ErrReleased)
		return nil
	}
	st.mu.Lock()
	if st.ended {
		err := st.err
		st.mu.Unlock()
		return err
	}
	st.count--
	if st.count > 0 {
		st.mu.Unlock()
		return nil
	}
	st.ended, st.err = true, ErrReleased
	st.mu.Unlock()
	s := st.s
	s.unregister(st)
	st.finish()
	held := time.Since(st.acquired)
	err := s.deleteReleased(st.node, st.sid, st.handoff)
	s.log.Debug("zklock: released", "path", st.path, "node", st.node, "err", err)
	if !st.internal {
		s.observe(Event{Kind: EventReleased, Acquire: st.acquire, Path: st.path, Node: st.node, Token: st.token, Held: held, Err: err})
	}
	if err != nil {
		return fmt.Errorf("zklock: release %s: %w", st.node, err)
	}
	return nil
}

// Exclusive reports whether the hold excludes other holders: false only for
// the hold a WithFailOpen acquire returns with ErrUnlocked.
func (h *Hold) Exclusive() bool { return h.h.node != "" }

// Revoked returns a channel closed when someone asks this hold's lock to be
// released (see WithRevocable and Revoke), or nil if the lock is not
// revocable. A request made while the hold was still queued is seen as soon
// as it is acquired. The hold stays valid: releasing is up to the holder.
func (h *Hold) Revoked() <-chan struct{} { return h.h.revoked }
