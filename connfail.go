package zklock

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
)

// A ConnectError is why the session's latest attempt to reach a server
// failed: the dial, the TLS handshake, or the session handshake. The errors
// of WaitConnected and of acquires that end while not connected wrap the
// latest one; a configuration error (a TLS refusal, ErrTLSHandshake; a
// server that is not ZooKeeper, ErrNotZooKeeper) is kept over later
// failures of other kinds until a server grants a session. The session also logs each
// new reason at Warn level (WithLogger).
type ConnectError struct {
	// Server is the server's address as given to Connect ("host:port").
	Server string
	// Err is what failed, as the dialer, crypto/tls or the connection said
	// (an *x509.HostnameError in a *tls.CertificateVerificationError, say).
	Err error

	tls   bool // a TLS refusal: Err wraps no ErrTLSHandshake of its own
	after bool // a violation after the session handshake (see connFailures.violation)
}

// Error names the server and what failed: "zklock: connecting to
// zk1:2181: ...", or "zklock: TLS handshake failed with zk1:2281: ...".
func (e *ConnectError) Error() string {
	switch {
	case e.tls:
		return fmt.Sprintf("%v with %s: %v", ErrTLSHandshake, e.Server, e.Err)
	case e.after:
		return fmt.Sprintf("zklock: connection to %s dropped: %v", e.Server, e.Err)
	}
	return fmt.Sprintf("zklock: connecting to %s: %v", e.Server, e.Err)
}

// Unwrap returns Err, and ErrTLSHandshake for a TLS refusal.
func (e *ConnectError) Unwrap() []error {
	if e.tls {
		return []error{ErrTLSHandshake, e.Err}
	}
	return []error{e.Err}
}

// configuration reports whether e is a failure retrying the same
// servers will not fix: a TLS refusal, a server that is not ZooKeeper, or
// one that broke the protocol after its handshake. Such a failure never
// counts as "unreachable".
func (e *ConnectError) configuration() bool {
	return e != nil && (e.tls || e.after || errors.Is(e.Err, ErrNotZooKeeper))
}

// stageError is a failure of one stage of connecting: the "TLS handshake"
// (tlsDialer) or the "session handshake" (the tap).
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// tlsRefused reports whether err is a TLS failure that retrying the same
// server will not fix: a certificate that did not verify, an alert from the
// server (our certificate refused, or our parameters), or a reply not TLS.
func tlsRefused(err error) bool {
	var (
		verify *tls.CertificateVerificationError
		record tls.RecordHeaderError
		alert  tls.AlertError
		host   x509.HostnameError
		ca     x509.UnknownAuthorityError
		cert   x509.CertificateInvalidError
		op     *net.OpError
	)
	return errors.As(err, &verify) || errors.As(err, &record) || errors.As(err, &alert) ||
		errors.As(err, &host) || errors.As(err, &ca) || errors.As(err, &cert) ||
		(errors.As(err, &op) && op.Op == "remote error") // crypto/tls's form of a received alert
}

// connFailures is what the session knows of its failed connection
// attempts since a server last granted it a session.
type connFailures struct {
	tls bool         // the session uses TLS
	log *slog.Logger // the session's

	mu     sync.Mutex
	last   *ConnectError     // the latest
	tlsErr *ConnectError     // the latest configuration error: a TLS refusal, a server not ZooKeeper
	logged map[string]string // per server, the reason last logged at Warn
	broke  *ConnectError     // the latest violation, kept across handshakes

	// Handshakes completed and violations after one (each also a server
	// reached), written under mu; read without it by Session.mark, on
	// every acquire's path.
	reached, violated atomic.Uint64
}

// A mark is how often servers were reached: handshakes completed, and
// violations after one. An operation takes one as it starts
// (Session.mark), to tell later what happened during it (see since).
type mark struct{ reached, violated uint64 }

// record records a failed attempt to reach server and logs a reason not
// logged before for that server (repeats go to Debug).
func (f *connFailures) record(server string, err error) {
	e := &ConnectError{Server: server, Err: err}
	var se *stageError
	if f.tls && tlsRefused(err) {
		e.tls = true
		if errors.As(err, &se) { // "TLS handshake failed with ...": the stage goes without saying
			e.Err = se.err
		}
	}
	f.mu.Lock()
	f.last = e
	if e.configuration() {
		f.tlsErr = e
	}
	msg := e.Error()
	repeat := f.logged[server] == msg
	if f.logged == nil {
		f.logged = make(map[string]string)
	}
	f.logged[server] = msg
	f.mu.Unlock()
	if repeat {
		f.log.Debug("zklock: connection attempt failed", "server", server, "err", err)
		return
	}
	f.log.Warn("zklock: connection attempt failed", "server", server, "err", msg)
}

// reset forgets the failures: a server granted a session.
func (f *connFailures) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last, f.tlsErr, f.logged = nil, nil, nil
	f.reached.Add(1)
}

// violation records that server, which had granted a session, sent what
// ZooKeeper never sends (err wraps ErrProtocol or ErrReplyTooLong), so the
// connection ends. ZooKeeper was reached: the failure is never
// "unreachable", and an acquire under way ends with it (see since).
func (f *connFailures) violation(server string, err error) {
	e := &ConnectError{Server: server, Err: err, after: true}
	f.mu.Lock()
	f.last, f.broke = e, e
	f.violated.Add(1)
	f.reached.Add(1)
	f.mu.Unlock()
	f.log.Warn("zklock: server broke the protocol, connection dropped", "server", server, "err", err)
}

// since reports whether a server was reached after m, and the latest
// violation after m, if any.
func (f *connFailures) since(m mark) (reached bool, broke *ConnectError) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.violated.Load() != m.violated {
		broke = f.broke
	}
	return f.reached.Load() != m.reached, broke
}

// latest is the failure to report: the latest configuration error, else the latest
// failure, since a server last granted a session; nil if none.
func (f *connFailures) latest() *ConnectError {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tlsErr != nil {
		return f.tlsErr
	}
	return f.last
}

// wrap adds the reason of the latest failed connection attempt, if any, to
// err, the error of a wait that ended while not connected.
func (f *connFailures) wrap(err error) error {
	if l := f.latest(); l != nil {
		return fmt.Errorf("%w; %w", err, l)
	}
	return err
}
