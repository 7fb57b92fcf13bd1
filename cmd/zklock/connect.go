package main

import (
	"context"
	"errors"
	"fmt"
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
// zklock.Connect returns at once and connects in the background, and the
// library has no "wait until connected", so the wait watches the session's
// state events. Credentials are added here rather than with
// zklock.WithAuth, because WithAuth makes Connect itself block (AddAuth
// waits for the server) with no bound: zklock would hang while ZooKeeper is
// down. go-zookeeper re-sends credentials added this way after every
// reconnect, as it does for WithAuth.
func (a *app) connect(ctx context.Context, cfg *config) (*zklock.Session, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.connectBound())
	defer cancel()

	connected := make(chan struct{})
	var once sync.Once
	observe := func(ev zklock.Event) { // called synchronously: must not block
		if ev.Kind == zklock.EventState && ev.State == zklock.StateConnected {
			once.Do(func() { close(connected) })
		}
	}
	a.log.Info("zklock: connecting", "servers", strings.Join(cfg.servers, ","), "session_timeout", cfg.sessionTimeout)
	s, err := zklock.Connect(cfg.servers,
		zklock.WithSessionTimeout(cfg.sessionTimeout),
		zklock.WithLogger(a.log),
		zklock.WithObserver(observe))
	if err != nil {
		return nil, err
	}
	select {
	case <-connected:
	case <-ctx.Done():
		s.Close()
		return nil, a.connectError(ctx, cfg)
	}
	if cfg.auth != nil {
		if err := addAuth(ctx, s, cfg.auth); err != nil {
			s.Close()
			if ctx.Err() != nil {
				return nil, a.connectError(ctx, cfg)
			}
			return nil, err
		}
	}
	return s, nil
}

// connectError explains why ctx ended while connecting.
func (a *app) connectError(ctx context.Context, cfg *config) error {
	var sig *interrupted
	if cause := context.Cause(ctx); errors.As(cause, &sig) {
		return sig
	}
	return fmt.Errorf("%w at %s within %v", errUnreachable, strings.Join(cfg.servers, ","), cfg.connectBound())
}

var errStopped = errors.New("signal watch stopped")

// addAuth adds credentials to the session's connection within ctx.
func addAuth(ctx context.Context, s *zklock.Session, auth *authSpec) error {
	errc := make(chan error, 1)
	go func() { errc <- s.Conn().AddAuth(auth.scheme, auth.cred) }()
	select {
	case err := <-errc:
		if err != nil {
			return fmt.Errorf("auth %s: %w", auth.scheme, err)
		}
		return nil
	case <-ctx.Done():
		s.Close() // unblocks AddAuth
		<-errc
		return ctx.Err()
	}
}

// interruptible returns a context cancelled with an *interrupted cause when
// SIGINT, SIGTERM or SIGHUP arrives. stop ends the watch and returns once
// the signal channel is no longer read, so the caller may read it; it then
// cancels ctx, whose cause stays *interrupted if a signal came first.
func (a *app) interruptible(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-a.signals:
			a.log.Info("zklock: signal while waiting", "signal", signalName(sig))
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
