package zklock

// The holder's watch on its own node: how a hold learns, while connected,
// that another client deleted its node (ErrNodeDeleted) or replaced it
// (ErrNodeGone), or asked for it to be released (Revoked). Every hold's
// node carries a data watch of the session's; the tap tells which paths
// have one armed. See docs/protocol.md#the-holders-watch-on-its-own-node.

import (
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
	zxid := s.deletedAt[ev.Path]
	delete(s.deletedAt, ev.Path)
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
		s.lose(h, &DeletedError{Node: h.node, Zxid: zxid})
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
