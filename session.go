package zklock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// State is the liveness of a Session's connection, as the recipes see it.
type State int32

const (
	// StateConnecting: no session has been established yet.
	StateConnecting State = iota
	// StateConnected: a live connection with a session.
	StateConnected
	// StateSuspended: the connection dropped; the session may still be alive
	// on the servers, and go-zookeeper is reconnecting. Holds stay valid until
	// the loss limit (see WithLossLimit).
	StateSuspended
	// StateExpired: the servers expired the session; every node it owned is
	// gone and go-zookeeper is establishing a new session.
	StateExpired
	// StateClosed: Close was called.
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateConnected:
		return "connected"
	case StateSuspended:
		return "suspended"
	case StateExpired:
		return "expired"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// A Session is a ZooKeeper connection that owns the liveness model every
// lock recipe relies on. go-zookeeper reports session events only to the
// callback given at Connect, so the library makes the connection itself.
//
// A Session is safe for concurrent use. Many locks may share one Session:
// each waiter watches only its own predecessor and only its goroutine wakes
// when that node goes. Close the Session when done: its nodes then vanish
// with the ZooKeeper session.
type Session struct {
	conn  *zk.Conn
	cfg   sessionConfig
	log   *slog.Logger
	epoch time.Time // origin of the monotonic instants below

	heard      atomic.Int64 // when bytes last arrived from a server (ns since epoch)
	negotiated atomic.Int64 // negotiated session timeout (ns), 0 until known
	dialSid    atomic.Int64 // session id of the latest connect response

	mu          sync.Mutex
	state       State
	sid         int64
	changed     chan struct{} // closed and replaced on every state change
	holds       map[*hold]struct{}
	lossTimer   *time.Timer
	lossFired   bool    // the loss limit fired during the current suspension
	suspensions int     // counts suspensions, so a stale loss timer can tell
	pending     []Event // state changes to report once mu is released
	quit        chan struct{}
	ready       chan struct{} // closed once the credentials are in place
	authErr     error         // why they are not, set before ready closes
	bg          sync.WaitGroup
	cleaner     cleaner
}

// Connect opens a session to the given servers ("host:port" each) and returns
// at once, without waiting for a server; operations wait for the connection
// (see WaitConnected). The
// session reconnects on its own and, after an expiry, establishes a new
// ZooKeeper session: holds taken under the old one are then lost.
func Connect(servers []string, opts ...SessionOption) (*Session, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no servers", ErrInvalidArgument)
	}
	cfg := defaultSessionConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.timeout <= 0 {
		return nil, fmt.Errorf("%w: session timeout %v", ErrInvalidArgument, cfg.timeout)
	}
	if cfg.dialer == nil {
		return nil, fmt.Errorf("%w: nil dialer", ErrInvalidArgument)
	}
	s := &Session{
		cfg:     cfg,
		log:     cfg.logger,
		epoch:   time.Now(),
		changed: make(chan struct{}),
		holds:   make(map[*hold]struct{}),
		quit:    make(chan struct{}),
	}
	s.cleaner.s = s
	zkOpts := func(c *zk.Conn) {
		zk.WithLogger(zkLogger{s.log})(c)
		for _, o := range cfg.zkOpts {
			o(c)
		}
		zk.WithDialer(s.dial)(c)
		zk.WithEventCallback(s.onEvent)(c)
	}
	conn, _, err := zk.Connect(servers, cfg.timeout, zkOpts)
	if err != nil {
		return nil, fmt.Errorf("zklock: connect: %w", err)
	}
	s.conn = conn
	s.ready = make(chan struct{})
	s.bg.Go(s.authenticate)
	return s, nil
}

// authenticate sends the session's credentials once a server answers, and
// then opens the session to the recipes (see ready). go-zookeeper sends them
// again after every reconnect.
func (s *Session) authenticate() {
	defer close(s.ready)
	for _, a := range s.cfg.auth {
		for attempt := 0; ; attempt++ {
			err := s.conn.AddAuth(a.scheme, a.cred)
			if err == nil {
				break
			}
			if !isConnErr(err) && !errors.Is(err, zk.ErrSessionExpired) {
				s.authErr = fmt.Errorf("zklock: add auth %q: %w", a.scheme, err)
				return
			}
			if s.cfg.retry.sleep(quitContext{s.quit}, attempt) != nil {
				s.authErr = ErrClosed
				return
			}
		}
	}
}

// waitReady waits until the session's credentials are in place, so that no
// node is created before the server knows who creates it.
func (s *Session) waitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.authErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// WaitConnected waits until the session is connected (and its credentials,
// if any, are accepted), ctx ends, or the session is closed. It does not
// have to be called: operations wait for the connection on their own.
func (s *Session) WaitConnected(ctx context.Context) error {
	if err := s.waitReady(ctx); err != nil {
		return err
	}
	for {
		state, _, changed := s.snapshot()
		switch state {
		case StateConnected:
			return nil
		case StateClosed:
			return ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// Conn returns the underlying go-zookeeper connection, for fenced writes
// (see Hold.Guard) and other ZooKeeper work. Do not close it: call Close.
func (s *Session) Conn() *zk.Conn { return s.conn }

// State returns the session's current liveness state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// ID returns the current ZooKeeper session id, 0 before the first one.
func (s *Session) ID() int64 { return s.conn.SessionID() }

// Close releases nothing explicitly: it closes the ZooKeeper session, whose
// nodes the servers then delete. Every hold still open is cancelled with a
// cause wrapping ErrLost and ErrClosed. Close waits for the session's
// background work to stop; it is safe to call more than once.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.state == StateClosed {
		s.unlock()
		return nil
	}
	s.setStateLocked(StateClosed)
	s.stopLossTimerLocked()
	close(s.quit)
	lost := s.takeHoldsLocked(func(*hold) bool { return true })
	s.unlock()
	for _, h := range lost {
		s.lose(h, ErrClosed)
	}
	s.conn.Close()
	s.bg.Wait()
	return nil
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
	if ev.Type != zk.EventSession {
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
		for h := range s.holds {
			verify = append(verify, h)
		}
	}
	s.unlock()
	for _, h := range lost {
		s.lose(h, ErrSessionExpired)
	}
	if len(verify) > 0 {
		s.bg.Go(func() { s.verify(verify) })
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
	lost := s.takeHoldsLocked(func(*hold) bool { return true })
	s.unlock()
	for _, h := range lost {
		s.lose(h, ErrSessionExpired)
	}
}

// verify checks, after a reconnect within the same session, that every hold's
// node still exists and is owned by this session (Curator's CURATOR-696).
func (s *Session) verify(holds []*hold) {
	for _, h := range holds {
		ok, stat, err := s.conn.Exists(h.node)
		switch {
		case err != nil:
			// A new disconnection or expiry is handled by its own event.
		case !ok || stat.EphemeralOwner != h.sid:
			if s.unregister(h) {
				s.lose(h, ErrNodeGone)
			}
		}
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
	s.state = st
	close(s.changed)
	s.changed = make(chan struct{})
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
	s.holds[h] = struct{}{}
	return nil
}

// unregister removes a hold and reports whether it was registered.
func (s *Session) unregister(h *hold) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.holds[h]
	delete(s.holds, h)
	return ok
}

func (s *Session) takeHoldsLocked(match func(*hold) bool) []*hold {
	var out []*hold
	for h := range s.holds {
		if match(h) {
			out = append(out, h)
			delete(s.holds, h)
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
	s.observe(Event{Kind: EventLost, Path: h.path, Node: h.node, Token: h.token, Held: time.Since(h.acquired), Err: err})
	if !errors.Is(reason, ErrSessionExpired) && !errors.Is(reason, ErrClosed) {
		s.cleaner.deleteNode(h.node, h.sid)
	}
}

func (s *Session) observe(ev Event) {
	if s.cfg.observer != nil {
		s.cfg.observer(ev)
	}
}

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zk: " + fmt.Sprintf(format, args...))
}
