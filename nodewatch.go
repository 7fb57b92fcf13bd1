package zklock

// The holder's watch on its own node: how a hold learns, while connected,
// that another client deleted its node (an operator forcing a handover with
// zkCli, a Curator or kazoo tool, `zklock` itself) or that its node was
// replaced by another session's node of the same name.
//
// Every hold's node carries a data watch of the session's: ZooKeeper keeps
// one watch per session and path, so a local waiter queued right behind the
// hold (which watches the hold's node as its predecessor) provides it for
// free; otherwise the hold sends one getData with a watch when it is
// registered, without waiting for the reply (no round trip is added to the
// acquire). Which paths the session has an armed watch on is read off the
// byte stream by the tap (see tapConn), in the order the server answered,
// so it can never claim a watch that already fired. The watch's
// notifications reach the session's event callback, which ends the hold:
//
//   - NodeDeleted: lost with ErrNodeDeleted. Our own release unregisters the
//     hold before it deletes the node, so it is never mistaken for a loss.
//   - NodeDataChanged: the node is read again (which re-arms the watch): a
//     revocation request closes Revoked; a node of another session or
//     another creation loses the hold with ErrNodeGone.
//
// A getData that finds no node sets no watch, and our own delete fires the
// one it set, so nothing is left watching after a release or a loss.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// onNodeEvent handles a watch notification for one of our paths. It runs
// on go-zookeeper's receive goroutine, so it only updates state; a re-read
// runs in the background.
func (s *Session) onNodeEvent(ev zk.Event) {
	s.mu.Lock()
	delete(s.armed, ev.Path)
	h := s.holds[ev.Path]
	if negNoNodeWatch { // test-only (negative_off.go)
		h = nil
	}
	var lost bool
	switch {
	case h == nil:
	case ev.Type == zk.EventNodeDeleted:
		lost = s.unregisterLocked(h)
	case ev.Type == zk.EventNodeDataChanged:
		s.goLocked(func() { s.recheck(h) })
	}
	s.unlock()
	if lost {
		s.lose(h, fmt.Errorf("%w: %s", ErrNodeDeleted, h.node))
	}
}

// armed records that the session now has a data watch on p (the tap saw a
// getData with a watch on p answered). It is called in stream order, before
// any notification that could fire that watch is handled.
func (s *Session) armedWatch(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateClosed {
		return
	}
	if s.armed == nil {
		s.armed = make(map[string]struct{})
	}
	s.armed[p] = struct{}{}
}

// watchNode makes sure h's node is watched: unless the session already has
// a data watch on it, and h needs no first read (a revocable hold must see
// a request made while it queued), it reads the node with a watch, in the
// background, bounded by the hold's life.
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
// rechecks every hold. The request needs no context of its own: it ends
// with its reply or with the connection (go-zookeeper fails every pending
// request when the connection drops or the session closes).
func (s *Session) recheck(h *hold) {
	if h.ctx.Err() != nil {
		return // released or lost before the watch was needed
	}
	data, stat, _, err := s.readWatch(context.Background(), h.node)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return // ended, or a new disconnection or expiry, handled on its own
	}
	if reason := h.check(data, stat, err); reason != nil && s.unregister(h) {
		s.lose(h, fmt.Errorf("%w: %s", reason, h.node))
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
		if r := h.check(data, stat, err); r != nil {
			reason = fmt.Errorf("%w: %s", r, h.node)
		}
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
		return ErrNodeDeleted
	case stat.EphemeralOwner != h.sid || stat.Czxid != h.czxid:
		return ErrNodeGone
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

// recheckAll rechecks holds, a few at a time: one request per hold, pipelined
// on the connection, without a goroutine per hold.
func (s *Session) recheckAll(holds []*hold) {
	const inFlight = 32
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for _, h := range holds {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			s.recheck(h)
		})
	}
	wg.Wait()
}
