package zklock

// The in-process handoff of a released node to a local waiter (the delete
// that follows is Session.deleteReleased, in hold.go).

import "sync"

// handoffs is the in-process handoff: when a hold of this session releases
// the head of an exclusive queue, the local waiter right behind it takes
// the lock at once, without a listing and before the delete commits. It
// excludes waiters of other sessions, which learn of the release from
// ZooKeeper. See docs/protocol.md#the-in-process-handoff.
type handoffs struct {
	mu sync.Mutex
	m  map[string]*handoff // local waiters by the node they wait on
}

// handoff is the registration of the local waiters on one node.
type handoff struct {
	users    int           // waiters watching the node
	released chan struct{} // closed when its holder in this session released it
}

// await registers a waiter's interest in the node at p.
func (hs *handoffs) await(p string) *handoff {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = make(map[string]*handoff)
	}
	h := hs.m[p]
	if h == nil {
		h = &handoff{released: make(chan struct{})}
		hs.m[p] = h
	}
	h.users++
	return h
}

// drop ends the registration h that await returned for p. One that was
// released is gone already, and a later one on p is not h's to end.
func (hs *handoffs) drop(p string, h *handoff) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m[p] == h {
		if h.users--; h.users == 0 {
			delete(hs.m, p)
		}
	}
}

// release tells the local waiters on node, the head released by its
// holder, that the lock is theirs.
func (hs *handoffs) release(node string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h := hs.m[node]; h != nil {
		delete(hs.m, node)
		close(h.released)
	}
}

// any reports whether a waiter is registered.
func (hs *handoffs) any() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hs.m) > 0
}

// done returns the channel closed when the node is handed over (nil,
// never ready, without a registration).
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
