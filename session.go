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

	heard      atomic.Int64 // when the latest request a server answered was sent (ns since epoch)
	negotiated atomic.Int64 // negotiated session timeout (ns), 0 until known
	dialSid    atomic.Int64 // session id of the latest connect response

	mu          sync.Mutex
	state       State
	sid         int64
	changed     chan struct{}       // closed and replaced on every state change
	holds       map[string]*hold    // registered holds by their node's path
	armed       map[string]struct{} // our paths the session has a data watch on (see nodewatch.go)
	lossTimer   *time.Timer
	lossFired   bool    // the loss limit fired during the current suspension
	suspensions int     // counts suspensions, so a stale loss timer can tell
	pending     []Event // state changes to report once mu is released
	quit        chan struct{}
	ready       chan struct{} // closed once the credentials are in place
	authErr     error         // why they are not, set before ready closes
	bg          sync.WaitGroup
	cleaner     cleaner
	creates     createTracker       // zxids of our creates' replies (see tapConn)
	handoffs    map[string]*handoff // local waiters by the node they wait on
	connCtx     context.Context     // lasts while the session is connected (see connectedAs)
	connCancel  context.CancelFunc
	failures    connFailures // why connection attempts failed (see ConnectError)
}

// Connect opens a session to the given servers ("host:port" each, port 1
// to 65535; a host alone means port 2181) and returns at once, without
// waiting for a server; operations wait for the connection (see
// WaitConnected). The session reconnects on its own and, after an expiry,
// establishes a new ZooKeeper session: holds taken under the old one are
// then lost.
//
// Host names are kept as given, through to the dialer (WithDialer), which
// resolves a name each time it dials it, and to the TLS handshake, which
// checks each server's certificate against the name given for that server
// (see WithTLS); go-zookeeper on its own resolves every name once, here,
// and dials the addresses. So a name that does not resolve is a failed
// connection attempt, retried as any other, whose reason is in the errors
// of the waits that end while it lasts (see ConnectError).
func Connect(servers []string, opts ...SessionOption) (*Session, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("%w: no servers", ErrInvalidArgument)
	}
	for _, srv := range servers {
		if err := checkServer(srv); err != nil {
			return nil, err
		}
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
	if err := ValidateNamespace(cfg.namespace); err != nil {
		return nil, err
	}
	if cfg.tls != nil {
		cfg.dialer = tlsDialer(cfg.dialer, cfg.tls, cfg.timeout) // the tap (see dial) reads the plaintext side
	}
	s := &Session{
		cfg:     cfg,
		log:     cfg.logger,
		epoch:   time.Now(),
		changed: make(chan struct{}),
		holds:   make(map[string]*hold),
		quit:    make(chan struct{}),
	}
	s.cleaner.s = s
	zkOpts := func(c *zk.Conn) {
		zk.WithLogger(zkLogger{s.log})(c)
		for _, o := range cfg.zkOpts {
			o(c)
		}
		zk.WithDialer(s.dial)(c)
		zk.WithHostProvider(&hostList{})(c)
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
			err := s.addAuth(context.Background(), a.scheme, a.cred) // bounded by the connection, retried until Close
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

// begin checks what every operation checks first: a usable context, an
// open session, and a context not yet ended.
func (s *Session) begin(ctx context.Context) error {
	switch {
	case ctx == nil:
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	case s.State() == StateClosed:
		return ErrClosed
	case ctx.Err() != nil:
		return context.Cause(ctx)
	}
	return nil
}

// WaitConnected waits until the session is connected (and its credentials,
// if any, are accepted), ctx ends, or the session is closed. It does not
// have to be called: operations wait for the connection on their own.
//
// If ctx ends first, the error wraps ctx's cause and, if an attempt to
// reach a server failed meanwhile, the *ConnectError saying why (wrapping
// ErrTLSHandshake if the TLS handshakes are refused).
func (s *Session) WaitConnected(ctx context.Context) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := s.waitReady(ctx); err != nil {
		if ctx.Err() != nil {
			return s.withFailure(err)
		}
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
			return s.withFailure(context.Cause(ctx))
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

func (s *Session) observe(ev Event) {
	if s.cfg.observer != nil {
		s.cfg.observer(ev)
	}
}

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zk: " + fmt.Sprintf(format, args...))
}
