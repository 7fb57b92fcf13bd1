package zklock

// The liveness model: how go-zookeeper's session events become the states
// connected, suspended and expired, and when a hold is declared lost.

import (
	"context"
	"time"

	"github.com/go-zookeeper/zk"
)

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

// setStateLocked moves to st and wakes everyone waiting on a change, which
// is reported once s.mu is released (see unlock).
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

func (s *Session) stopLossTimerLocked() {
	if s.lossTimer != nil {
		s.lossTimer.Stop()
		s.lossTimer = nil
	}
}
