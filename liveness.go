package zklock

// The liveness model: how go-zookeeper's session events become the states
// connected, suspended and expired, and when a hold is declared lost.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/go-zookeeper/zk"
)

// dial is the dialer the session gives go-zookeeper: the configured dialer,
// wrapped so the session knows when a server was last heard from and what
// session timeout and id the server granted.
func (s *Session) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := s.cfg.dialer(network, addr, timeout)
	if err != nil {
		s.connectFailed(addr, err)
		return nil, err
	}
	// A dial that succeeds proves nothing about our session: heard moves
	// only when the server answers (see tapConn.answered).
	t := &tapConn{Conn: c, s: s, server: addr, scan: replyScanner{first: true}}
	if s.restoresWatches() {
		t.gate = make(chan struct{})
	}
	return t, nil
}

// restoresWatches reports whether a reconnect now is likely to make
// go-zookeeper restore watches (see tapConn.Read): the session has been
// connected, and it has holds (whose nodes are watched) or watches armed.
func (s *Session) restoresWatches() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid != 0 && (len(s.holds) > 0 || len(s.armed) > 0 || len(s.handoffs) > 0)
}

// lossLimit is how long a suspension may last, from the last time the server
// was heard from, before holds are lost; negative means never.
func (s *Session) lossLimit() time.Duration {
	if s.cfg.lossSet {
		return s.cfg.lossLimit
	}
	t := time.Duration(s.negotiated.Load())
	if t <= 0 {
		t = s.cfg.timeout
	}
	return t * 2 / 3
}

// onEvent is go-zookeeper's event callback. It runs on the connection's own
// goroutine, so it only updates state and never calls ZooKeeper.
func (s *Session) onEvent(ev zk.Event) {
	switch ev.Type {
	case zk.EventNodeDeleted, zk.EventNodeDataChanged, zk.EventNotWatching:
		s.onNodeEvent(ev)
		return
	case zk.EventSession:
	default:
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.connected(s.dialSid.Load())
	case zk.StateExpired:
		s.expired()
	case zk.StateDisconnected, zk.StateConnecting, zk.StateConnected, zk.StateAuthFailed:
		s.suspended()
	}
}

func (s *Session) connected(sid int64) {
	s.mu.Lock()
	if s.state == StateClosed {
		s.unlock()
		return
	}
	wasSuspended := s.state == StateSuspended
	s.sid = sid
	s.lossFired = false
	s.stopLossTimerLocked()
	s.setStateLocked(StateConnected)
	lost := s.takeHoldsLocked(func(h *hold) bool { return h.sid != sid })
	var verify []*hold
	if wasSuspended {
		for _, h := range s.holds {
			verify = append(verify, h)
		}
	}
	if len(verify) > 0 {
		// Check that every hold's node survived the disconnection, and
		// watch it again (Curator's CURATOR-696).
		s.goLocked(func() { s.recheckAll(verify) })
	}
	s.unlock()
	for _, h := range lost {
		s.lose(h, ErrSessionExpired)
	}
}

func (s *Session) suspended() {
	s.mu.Lock()
	defer s.unlock()
	if s.state != StateConnected {
		return
	}
	s.setStateLocked(StateSuspended)
	limit := s.lossLimit()
	if limit < 0 {
		return
	}
	wait := time.Duration(s.heard.Load()) + limit - time.Since(s.epoch)
	s.suspensions++
	gen := s.suspensions
	s.lossTimer = time.AfterFunc(max(wait, 0), func() { s.suspendedTooLong(gen) })
}

// suspendedTooLong declares every hold lost, if suspension number gen is
// still going on (a timer that fired as the connection came back must not
// cut a later suspension short).
func (s *Session) suspendedTooLong(gen int) {
	s.mu.Lock()
	if s.state != StateSuspended || s.lossFired || gen != s.suspensions {
		s.mu.Unlock()
		return
	}
	s.lossFired = true
	lost := s.takeHoldsLocked(func(*hold) bool { return true })
	s.mu.Unlock()
	for _, h := range lost {
		s.lose(h, ErrSuspended)
	}
}

func (s *Session) expired() {
	s.mu.Lock()
	if s.state == StateClosed {
		s.unlock()
		return
	}
	s.stopLossTimerLocked()
	s.setStateLocked(StateExpired)
	s.armed = nil // the servers dropped the session's watches
	lost := s.takeHoldsLocked(func(*hold) bool { return true })
	s.unlock()
	for _, h := range lost {
		s.lose(h, ErrSessionExpired)
	}
}

// setStateLocked moves to st and wakes everyone waiting on a change. The
// change is logged and observed once s.mu is released (see Unlock below), so
// an observer may call back into the session.
func (s *Session) setStateLocked(st State) {
	if s.state == st {
		return
	}
	s.pending = append(s.pending, Event{Kind: EventState, State: st, Session: s.sid})
	if s.state == StateConnected {
		s.connCancel() // requests bounded by the connection (see connectedAs) end now
	}
	if st == StateConnected {
		s.connCtx, s.connCancel = context.WithCancel(context.Background())
	}
	s.state = st
	close(s.changed)
	s.changed = make(chan struct{})
}

// connectedAs returns a context that lasts as long as the current
// connection, if the session is connected as ZooKeeper session sid: the
// bound of requests that must not wait for a dead connection.
func (s *Session) connectedAs(sid int64) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnected || s.sid != sid {
		return nil, false
	}
	return s.connCtx, true
}

// unlock releases s.mu and then reports the state changes made under it.
func (s *Session) unlock() {
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, ev := range pending {
		s.log.Info("zklock: session "+ev.State.String(), "session", fmt.Sprintf("0x%x", ev.Session))
		s.observe(ev)
	}
}

// snapshot returns the state, the session id it refers to, and a channel
// closed at the next state change.
func (s *Session) snapshot() (State, int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.sid, s.changed
}

func (s *Session) stopLossTimerLocked() {
	if s.lossTimer != nil {
		s.lossTimer.Stop()
		s.lossTimer = nil
	}
}

// register adds a hold to the liveness model. It refuses a hold whose node
// belongs to another session, or one taken while the session is closed,
// expired, or suspended past its loss limit.
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

// goLocked runs f in the background unless the session is closed; s.mu is
// held, so Close cannot be waiting for the background work yet.
func (s *Session) goLocked(f func()) {
	if s.state != StateClosed {
		s.bg.Go(f)
	}
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
		s.observe(Event{Kind: EventLost, Acquire: h.acquire, Path: h.path, Node: h.node, Token: h.token, Held: time.Since(h.acquired), Err: err})
	}
	// The node went with an expired session, or is gone or someone
	// else's: only a node we may still own (suspended too long) is deleted.
	if !errors.Is(reason, ErrSessionExpired) && !errors.Is(reason, ErrClosed) && !errors.Is(reason, ErrNodeGone) {
		s.cleaner.deleteNode(h.node, h.sid)
	}
}
