package zklock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// A Hold is one successful acquisition of a lock, released exactly once. It
// is valid until it is released or lost: the session expired, stayed
// suspended past its loss limit, or the holder's node was deleted or
// replaced (see ErrLost). On loss, Done closes and Err says why; stop
// acting on the lock's behalf, and fence every write with Token, so that a
// holder that learns of its loss too late is still refused by the resource.
//
// Its Context re-enters the same lock when passed to Lock again: goroutines
// that must exclude each other must not share it. See
// docs/protocol.md#holds-and-their-loss.
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
	recipe     string        // for Event.Recipe

	mu    sync.Mutex
	count int
	ended bool
	err   error
	cause error // why the holder releases, when the library knows (Event.Cause)
}

// electionKey marks the context of a LeaderElection's acquire at dir: its
// holds are an election's, though a Mutex's on the wire.
type electionKey struct{ dir string }

// recipeOf names the recipe of a hold with key (a holdKey), acquired
// with ctx, for Event.Recipe.
func recipeOf(ctx context.Context, key any) string {
	k, _ := key.(holdKey)
	switch k.mark {
	case markLock:
		if ctx.Value(electionKey{k.dir}) != nil {
			return RecipeElection
		}
		return RecipeMutex
	case markRead, markWrite:
		return RecipeRWLock
	case markLease:
		return RecipeSemaphore
	case markLatch:
		return RecipeLatch
	}
	return ""
}

// revokeMessage is what Curator's Revoker writes to ask for a release.
var revokeMessage = []byte("__REVOKE__")

// holdKey identifies a lock within a session for re-entry: the same lock
// directory and node kind.
type holdKey struct {
	s    *Session
	dir  string
	mark string
}

// newHold registers h, a fresh acquisition, and with watch, watches its node.
func (s *Session) newHold(ctx context.Context, h *hold, revocable, watch bool, start time.Time) (*Hold, error) {
	h.acquired, h.count, h.recipe = time.Now(), 1, recipeOf(ctx, h.key)
	h.ctx, h.cancel = context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), h.key, h))
	if revocable {
		h.revoked = make(chan struct{})
	}
	if err := s.register(h); err != nil {
		h.cancel(err)
		return nil, err
	}
	if watch {
		s.watchNode(h)
	}
	s.log.Debug("zklock: acquired", "path", h.path, "node", h.node, "token", h.token)
	if !h.internal {
		s.observe(Event{Kind: EventAcquired, Acquire: h.acquire, Path: h.path, Node: h.node, Token: h.token, Wait: time.Since(start),
			Recipe: h.recipe, Context: h.ctx})
	}
	return &Hold{h: h}, nil
}

// reenter returns a new Hold on the acquisition h, if it is not over.
func (h *hold) reenter() (*Hold, error) {
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

// Context returns a context cancelled when the hold is lost or fully
// released (context.Cause wraps ErrLost or ErrReleased). It carries the
// values of the context given to Lock, not its deadline or cancellation.
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

// Token returns the fencing token: the czxid of the holder's node, greater
// than every earlier holder's on this lock (see the fence package).
func (h *Hold) Token() int64 { return h.h.token }

// Node returns the path of the holder's node as the caller sees it: under
// the lock path, without the session's namespace (see WithNamespace).
func (h *Hold) Node() string { return h.h.s.callerPath(h.h.node) }

// Path returns the lock path, as given to the recipe.
func (h *Hold) Path() string { return h.h.path }

// SessionID returns the ZooKeeper session that owns the holder's node.
func (h *Hold) SessionID() int64 { return h.h.sid }

// Guard returns a check on the holder's node for zk.Conn.Multi: a multi
// that includes it applies only while the node exists. It names the full
// znode path, namespace included, so the multi's other paths must be full
// too (Session.FullPath):
//
//	_, err := sess.Conn().Multi(hold.Guard(), &zk.SetDataRequest{Path: p, Data: d, Version: -1})
func (h *Hold) Guard() *zk.CheckVersionRequest {
	return &zk.CheckVersionRequest{Path: h.h.node, Version: -1}
}

func (h *Hold) String() string {
	return fmt.Sprintf("zklock.Hold{node: %s, token: %d}", h.Node(), h.h.token)
}

// Release gives up this hold; the node is deleted at the last reentrant
// release. Releasing twice returns ErrNotHeld, a lost hold its loss error.
// Release never waits for a dead connection: if the delete fails on a
// connection problem, or the session is not connected (ErrUnreachable), it
// says so and the session deletes the node in the background. The hold is
// over either way.
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
	cause := st.cause
	if cause == nil && st.revokeSeen {
		cause = ErrRevoked
	}
	st.mu.Unlock()
	s := st.s
	s.unregister(st)
	st.finish()
	held := time.Since(st.acquired)
	err := s.deleteReleased(st.node, st.sid, st.handoff)
	s.log.Debug("zklock: released", "path", st.path, "node", st.node, "err", err)
	if !st.internal {
		s.observe(Event{Kind: EventReleased, Acquire: st.acquire, Path: st.path, Node: st.node, Token: st.token, Held: held, Err: err,
			Recipe: st.recipe, Cause: cause, Context: st.ctx})
	}
	if err != nil {
		return fmt.Errorf("zklock: release %s: %w", st.node, err)
	}
	return nil
}

// deleteReleased deletes a released hold's node within the current
// connection, or else in the background, and the error says so. handoff
// marks an exclusive queue's head, handed to a local waiter first.
func (s *Session) deleteReleased(node string, sid int64, handoff bool) error {
	ctx, ok := s.connectedAs(sid)
	var err error
	switch {
	case !ok:
		state, _, _ := s.snapshot()
		err = fmt.Errorf("%w: session %v", ErrUnreachable, state)
	case handoff:
		s.handoffs.release(node)
		err = s.remove(ctx, node)
	default:
		err = s.remove(ctx, node)
	}
	if err != nil && ctx != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w: connection lost", ErrUnreachable)
	}
	if err != nil && (isConnErr(err) || errors.Is(err, ErrUnreachable)) {
		s.cleaner.deleteNode(node, sid)
		err = fmt.Errorf("%w (the node is deleted in the background)", err)
	}
	return err
}

// releaseFor is Release, telling observers why the holder releases (Event.Cause).
func (h *Hold) releaseFor(cause error) error {
	if h != nil && h.h != nil {
		h.h.mu.Lock()
		if h.h.cause == nil {
			h.h.cause = cause
		}
		h.h.mu.Unlock()
	}
	return h.Release()
}

// Exclusive reports whether the hold excludes other holders: false only for
// the hold a WithFailOpen acquire returns with ErrUnlocked.
func (h *Hold) Exclusive() bool { return h.h.node != "" }

// Revoked returns a channel closed when someone asks for this hold's release
// (WithRevocable, Revoke; a request made while it queued counts), or nil if
// the lock is not revocable. Releasing is up to the holder.
func (h *Hold) Revoked() <-chan struct{} { return h.h.revoked }

// register adds a hold to the liveness model, unless its node is another
// session's or the session is closed, expired or past its loss limit.
func (s *Session) register(h *hold) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == StateClosed:
		return ErrClosed
	case s.state == StateExpired || h.sid != s.sid:
		return ErrSessionExpired
	case s.state == StateSuspended && s.lossFired:
		return ErrSuspended
	}
	s.holds[h.node] = h
	return nil
}

// unregister removes a hold and reports whether it was registered.
func (s *Session) unregister(h *hold) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unregisterLocked(h)
}

func (s *Session) unregisterLocked(h *hold) bool {
	if s.holds[h.node] != h {
		return false
	}
	delete(s.holds, h.node)
	return true
}

func (s *Session) takeHoldsLocked(match func(*hold) bool) []*hold {
	var out []*hold
	for node, h := range s.holds {
		if match(h) {
			out = append(out, h)
			delete(s.holds, node)
		}
	}
	return out
}

// lose ends a hold that may no longer be exclusive, and deletes its node in
// the background unless the session that owned it is gone.
func (s *Session) lose(h *hold, reason error) {
	err := fmt.Errorf("%w: %w", ErrLost, reason)
	if !h.end(err) {
		return
	}
	s.log.Warn("zklock: lock lost", "node", h.node, "token", h.token, "reason", reason.Error())
	if !h.internal {
		s.observe(Event{Kind: EventLost, Acquire: h.acquire, Path: h.path, Node: h.node, Token: h.token, Held: time.Since(h.acquired), Err: err,
			Recipe: h.recipe, Context: h.ctx})
	}
	// The node went with an expired session, or is gone or someone
	// else's: only a node we may still own (suspended too long) is deleted.
	if !errors.Is(reason, ErrSessionExpired) && !errors.Is(reason, ErrClosed) && !errors.Is(reason, ErrNodeGone) {
		s.cleaner.deleteNode(h.node, h.sid)
	}
}

// watchNode reads h's node with a watch, in the background, unless the
// session has a data watch on it already and h needs no first read (a
// revocable hold must see a request made while it queued).
func (s *Session) watchNode(h *hold) {
	if negNoNodeWatch { // test-only (negative_off.go)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.armed[h.node]; ok && h.revoked == nil {
		return
	}
	s.goLocked(func() { s.recheck(h) })
}

// recheck reads h's node with a watch, in the background, and ends h if
// the node is gone or is not the one h created; it closes h.revoked on a
// revocation request. A connection problem is left to the reconnect, which
// rechecks every hold.
func (s *Session) recheck(h *hold) {
	if h.ctx.Err() != nil {
		return // released or lost before the watch was needed
	}
	data, stat, _, err := s.readWatch(context.Background(), h.node)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return // ended, or a new disconnection or expiry, handled on its own
	}
	if reason := h.check(data, stat, err); reason != nil && s.unregister(h) {
		s.lose(h, reason)
	}
}

// confirm is recheck made before a hold is returned (queue.confirm): the
// hold's node exists, is the one it created, and the hold is still valid;
// the same read arms the hold's watch. On failure the hold is ended.
func (s *Session) confirm(ctx context.Context, h *hold) error {
	data, stat, _, err := s.readWatch(ctx, h.node)
	var reason error
	switch {
	case err != nil && !errors.Is(err, zk.ErrNoNode):
		reason = fmt.Errorf("zklock: confirm %s: %w", h.node, err)
	default:
		reason = h.check(data, stat, err)
	}
	if reason == nil {
		if state, sid, _ := s.snapshot(); sid != h.sid || state != StateConnected && state != StateSuspended {
			reason = fmt.Errorf("%w: session changed before %s could be used", ErrSessionExpired, h.node)
		}
	}
	if reason != nil {
		s.unregister(h)
		h.end(reason)
		return reason
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err // lost meanwhile
}

// check judges a read of h's node: the reason h is lost, or nil.
func (h *hold) check(data []byte, stat *zk.Stat, err error) error {
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return &DeletedError{Node: h.node}
	case stat.EphemeralOwner != h.sid || stat.Czxid != h.czxid:
		return fmt.Errorf("%w: %s", ErrNodeGone, h.node)
	case h.revoked != nil && bytes.Equal(data, revokeMessage):
		h.revoke()
	}
	return nil
}

// revoke closes h.revoked once.
func (h *hold) revoke() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.revokeSeen {
		h.revokeSeen = true
		close(h.revoked)
	}
}
