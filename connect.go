package zklock

// Opening and closing a session.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

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
		if err := ValidateServer(srv); err != nil {
			return nil, err
		}
	}
	cfg := defaultSessionConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxReply < minMaxReply {
		return nil, fmt.Errorf("%w: WithMaxReply(%d): the bound must be at least %d bytes", ErrInvalidArgument, cfg.maxReply, minMaxReply)
	}
	if cfg.timeout < MinSessionTimeout || cfg.timeout > MaxSessionTimeout {
		return nil, fmt.Errorf("%w: session timeout %v: want %v to %v (ZooKeeper's servers then negotiate it into their range, 4s to 40s by default)",
			ErrInvalidArgument, cfg.timeout, MinSessionTimeout, MaxSessionTimeout)
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
	s.hosts = newHostList(s.quit)
	s.cleaner.s = s
	s.failures.tls, s.failures.log = cfg.tls != nil, s.log
	zkOpts := func(c *zk.Conn) {
		zk.WithLogger(zkLogger{s.log})(c)
		for _, o := range cfg.zkOpts {
			o(c)
		}
		zk.WithDialer(s.dial)(c)
		zk.WithHostProvider(s.hosts)(c)
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

// ValidateServer checks one server address as Connect does: "host:port"
// with a port from 1 to 65535, or a host alone for port 2181; the host an
// IP address (IPv6 in brackets, with a port) or a DNS name (letters,
// digits, '-' and '_' in dot-separated labels of at most 63 characters).
// It returns an error wrapping ErrInvalidArgument, naming the address,
// for anything else, so that a typo fails at once instead of as an
// unreachable server.
func ValidateServer(addr string) error {
	if err := checkServer(addr); err != nil {
		return err
	}
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	if net.ParseIP(host) != nil || validHostName(host) {
		return nil
	}
	return fmt.Errorf("%w: server %q: %q is neither an IP address nor a host name", ErrInvalidArgument, addr, host)
}

// validHostName reports whether h is a DNS name: labels of 1 to 63
// letters, digits, '-' or '_', joined by dots (a final dot allowed), at
// most 253 characters.
func validHostName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
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
			if permanent(err) {
				s.authErr = fmt.Errorf("%w: ZooKeeper refused the session's %q credentials: %w", ErrNotAuthorized, a.scheme, err)
				return
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
			return s.failures.wrap(err)
		}
		return err
	}
	for {
		state, _, changed := s.snapshot()
		switch state {
		case StateConnected:
			s.reportNegotiated()
			return nil
		case StateClosed:
			return ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return s.failures.wrap(context.Cause(ctx))
		}
	}
}

// SessionTimeout returns the session timeout the server granted, or the
// one asked for (WithSessionTimeout) until a server has granted one. A
// server negotiates what it is asked into its minSessionTimeout and
// maxSessionTimeout (2 and 20 ticks by default).
func (s *Session) SessionTimeout() time.Duration {
	if t := time.Duration(s.negotiated.Load()); t > 0 {
		return t
	}
	return s.cfg.timeout
}

// reportNegotiated logs, once, at Warn level, a session timeout the
// server clipped into its range.
func (s *Session) reportNegotiated() {
	got := time.Duration(s.negotiated.Load())
	if got <= 0 || got == s.cfg.timeout.Truncate(time.Millisecond) || !s.clipReported.CompareAndSwap(false, true) {
		return
	}
	bound := "minSessionTimeout"
	if got < s.cfg.timeout {
		bound = "maxSessionTimeout"
	}
	s.log.Warn("zklock: the server negotiated another session timeout (its "+bound+")",
		"asked", s.cfg.timeout, "granted", got)
}

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

type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug("zk: " + fmt.Sprintf(format, args...))
}
