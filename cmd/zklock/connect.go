package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock"
)

// defaultConnectBound bounds connecting (and a --try attempt) when
// --timeout is 0, as cli.md says for --on-unreachable.
const defaultConnectBound = 10 * time.Second

// connectBound is how long zklock waits for a ZooKeeper server to answer.
func (c *config) connectBound() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return defaultConnectBound
}

// connect opens a session and waits, within the connect bound and until
// ctx ends, for it to be established and authenticated.
//
// zklock.Connect returns at once and connects in the background;
// Session.WaitConnected is the bounded wait. Credentials go in with
// zklock.WithAuth: the session sends them once a server answers (and again
// after every reconnect) and creates nothing before they are accepted, so
// WaitConnected covers them too and a ZooKeeper that is down cannot make
// zklock hang past the bound.
func (a *app) connect(ctx context.Context, cfg *config) (*zklock.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.connectBound())
	defer cancel()

	a.log.Info("connecting", "servers", strings.Join(cfg.servers, ","), "session_timeout", cfg.sessionTimeout,
		"namespace", cfg.namespace)
	opts := cfg.sessionOptions(a.libLog)
	if a.mon != nil {
		opts = append(opts, zklock.WithObserver(a.mon.observe))
	}
	s, err := zklock.Connect(cfg.servers, opts...)
	if err != nil {
		return nil, err
	}
	if err := s.WaitConnected(ctx); err != nil {
		s.Close()
		if ctx.Err() != nil {
			return nil, a.connectError(ctx, cfg, err)
		}
		return nil, err
	}
	return s, nil
}

// sessionOptions are the library options the global flags ask for.
func (c *config) sessionOptions(log *slog.Logger) []zklock.SessionOption {
	opts := []zklock.SessionOption{
		zklock.WithSessionTimeout(c.sessionTimeout),
		zklock.WithLogger(log),
	}
	if c.namespace != "" {
		opts = append(opts, zklock.WithNamespace(c.namespace))
	}
	if c.auth != nil {
		opts = append(opts, zklock.WithAuth(c.auth.scheme, c.auth.cred))
	}
	if c.lossSet {
		opts = append(opts, zklock.WithLossLimit(c.lossLimit))
	}
	if c.tls != nil {
		opts = append(opts, zklock.WithTLS(c.tls))
	}
	if c.maxReply > 0 {
		opts = append(opts, zklock.WithMaxReply(c.maxReply))
	}
	return opts
}

// connectError explains why ctx ended while connecting, from err, the
// error of Session.WaitConnected: a signal; a refused TLS handshake or a
// server that is not ZooKeeper, configuration errors and not an
// unreachable ZooKeeper (so --on-unreachable run does not run CMD on them);
// or no server answered, with the reason of the last attempt.
func (a *app) connectError(ctx context.Context, cfg *config, err error) error {
	var sig *interrupted
	if cause := context.Cause(ctx); errors.As(cause, &sig) {
		return sig
	}
	var ce *zklock.ConnectError
	switch {
	case !errors.As(err, &ce):
		return fmt.Errorf("%w at %s within %v", errUnreachable, strings.Join(cfg.servers, ","), cfg.connectBound())
	case errors.Is(ce, zklock.ErrTLSHandshake):
		return fmt.Errorf("%w (no session within %v: check --tls-ca, --tls-cert, --tls-key, --tls-server-name and --servers)",
			ce, cfg.connectBound())
	case errors.Is(ce, zklock.ErrProtocol) || errors.Is(ce, zklock.ErrReplyTooLong):
		return fmt.Errorf("%w (a server was reached and broke ZooKeeper's protocol: not unreachable)", ce)
	case errors.Is(ce, zklock.ErrNotZooKeeper):
		return fmt.Errorf("%w (no session within %v: check --servers, and TLS: a secureClientPort needs --tls-ca)",
			ce, cfg.connectBound())
	}
	return fmt.Errorf("%w at %s within %v (last attempt: %w)", errUnreachable, strings.Join(cfg.servers, ","), cfg.connectBound(), ce)
}

var errStopped = errors.New("signal watch stopped")

// interruptible returns a context cancelled with an *interrupted cause when
// one of the stopSignals arrives. stop ends the watch and returns once
// the signal channel is no longer read, so the caller may read it; it then
// cancels ctx, whose cause stays *interrupted if a signal came first.
func (a *app) interruptible(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-a.signals:
			a.log.Info("signal while waiting", "signal", signalName(sig))
			cancel(&interrupted{sig})
		case <-quit:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			close(quit)
			<-done
			cancel(errStopped)
		})
	}
}

// connectUntilSignal is the prelude of the verbs that watch until a signal
// (ls --watch, elect --listen): a context that ends at the first signal or
// after --timeout, if set, and a session connected under it. When the
// connect fails it has said why (prefixed by what) and returns ok false
// with the exit status: 0 for a signal. end releases what it made.
func (a *app) connectUntilSignal(cfg *config, what string) (ctx context.Context, s *zklock.Session, end func(), code int, ok bool) {
	ctx, stop := a.interruptible(context.Background())
	cancel := context.CancelFunc(func() {})
	if cfg.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
	}
	s, err := a.connect(ctx, cfg)
	if err != nil {
		cancel()
		stop()
		var sig *interrupted
		if errors.As(err, &sig) {
			return nil, nil, nil, exitOK, false
		}
		a.errorf("%s: %v", what, err)
		return nil, nil, nil, exitCode(err), false
	}
	return ctx, s, func() { s.Close(); cancel(); stop() }, 0, true
}

// oneShot runs a verb's single ZooKeeper operation: it connects, then runs
// op, both bounded by --timeout (10s if 0) and by an interrupting signal. A
// request queued on a dead connection does not see ctx, so at the deadline
// the session is closed under op. connected tells whether the connect
// succeeded.
func (a *app) oneShot(inv *invocation, op func(context.Context, *zklock.Session) error) (connected bool, err error) {
	ctx, stop := a.interruptible(context.Background())
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, inv.cfg.connectBound())
	defer cancel()

	s, err := a.connect(ctx, &inv.cfg)
	if err != nil {
		return false, err
	}
	defer s.Close()
	errc := make(chan error, 1)
	go func() { errc <- op(ctx, s) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.Close()
		<-errc
		err = context.Cause(ctx)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer from ZooKeeper within %v", inv.cfg.connectBound())
	}
	return true, err
}
