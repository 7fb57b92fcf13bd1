package zklock

// The in-process handoff: ZooKeeper tells a waiter only that the node it
// watched went, not whether its holder released it or a waiter gave up, so
// a waiter that was not second in line must list the queue again. Within
// one session the engine knows: when a hold of this session releases the
// node a local waiter watches, the waiter is the new head of the queue and
// takes the lock without a listing.

import "context"

// handoff is a local waiter's registration on the node it waits on.
type handoff struct {
	users    int           // waiters watching the node
	released chan struct{} // closed when its holder in this session released it
}

// awaitHandoff registers a waiter's interest in the node at p.
func (s *Session) awaitHandoff(p string) *handoff {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handoffs == nil {
		s.handoffs = make(map[string]*handoff)
	}
	h := s.handoffs[p]
	if h == nil {
		h = &handoff{released: make(chan struct{})}
		s.handoffs[p] = h
	}
	h.users++
	return h
}

func (s *Session) dropHandoff(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.handoffs[p]; h != nil {
		if h.users--; h.users == 0 {
			delete(s.handoffs, p)
		}
	}
}

// releaseHead hands the lock of an exclusive queue on: it tells the local
// waiter behind node (the head, released by its holder) that it holds now,
// and then deletes node. The waiter need not wait for the delete: until it
// commits, node still sits ahead of every other session's node, so no one
// else can take the lock, and the waiter's own token (its node's czxid) is
// already larger than node's. Only a waiter whose predecessor is node
// registers on it, and in a queue with the jump rule nothing can be queued
// between them. If the delete fails, node stays ahead until the cleaner
// deletes it or the session ends, which ends both holds.
func (s *Session) releaseHead(ctx context.Context, node string) error {
	s.mu.Lock()
	if h := s.handoffs[node]; h != nil {
		delete(s.handoffs, node)
		close(h.released)
	}
	s.mu.Unlock()
	return s.remove(ctx, node)
}

// done returns the channel closed when the node a waiter watches is handed
// to it (nil, never ready, without a registration).
func (h *handoff) done() <-chan struct{} {
	if h == nil {
		return nil
	}
	return h.released
}

// handedOff reports whether the node h was registered on has been handed
// over to this session's waiter.
func (h *handoff) handedOff() bool {
	select {
	case <-h.done():
		return true
	default:
		return false
	}
}
