package main

// The endpoints of a holding verb (--http ADDR): /healthz, /leader and
// /metrics, answered from what the session has reported (its observer) and
// the hold of the running term, never with a ZooKeeper request.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock"
	zkmetrics "github.com/zklock/zklock/internal/metrics"
)

// monitor follows a holding verb's session (as its observer) and the hold
// of its current term. It counts with the engine of contrib/prometheus
// (internal/metrics), so /metrics serves the same series. It is safe for
// concurrent use.
type monitor struct {
	path      string
	lossLimit time.Duration // --loss-limit, if lossSet
	lossSet   bool
	session   *zklock.Session // set once connected, before the server starts
	rec       *zkmetrics.Recorder
	count     func(zklock.Event) // rec's observer of the session

	mu          sync.Mutex
	state       zklock.State
	suspendedAt time.Time // when the current suspension began
	hold        *zklock.Hold
	health      healthState // elect --health-cmd (health.go)
}

func newMonitor(path string, cfg *config) *monitor {
	rec := zkmetrics.NewRecorder(zkmetrics.Config{})
	return &monitor{path: path, lossLimit: cfg.lossLimit, lossSet: cfg.lossSet, rec: rec, count: rec.Observer()}
}

// observe is the session's observer (zklock.WithObserver): it must not block.
func (m *monitor) observe(ev zklock.Event) {
	m.count(ev)
	if ev.Kind != zklock.EventState {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state = ev.State
	if ev.State == zklock.StateSuspended {
		m.suspendedAt = time.Now()
	}
}

// retry counts a campaign --requeue starts again, as the library's own
// requeueing election reports one (zklock.EventRetry).
func (m *monitor) retry() {
	m.count(zklock.Event{Kind: zklock.EventRetry, Path: m.path, Recipe: zklock.RecipeElection})
}

// held records the hold of the current term; nil once it is over.
func (m *monitor) held(h *zklock.Hold) {
	m.mu.Lock()
	m.hold = h
	m.mu.Unlock()
}

// usable reports whether the session can serve the lock: connected, or
// suspended for less than the loss limit (--loss-limit, else 2/3 of the
// negotiated session timeout, as the library's default; negative: until
// the session expires), counted from the suspension.
func (m *monitor) usable() (bool, zklock.State) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.state {
	case zklock.StateConnected:
		return true, m.state
	case zklock.StateSuspended:
		limit := m.lossLimit
		if !m.lossSet {
			limit = m.session.SessionTimeout() * 2 / 3
		}
		return limit < 0 || time.Since(m.suspendedAt) < limit, m.state
	}
	return false, m.state
}

// leading reports whether the current term holds its lock now.
func (m *monitor) leading() bool {
	m.mu.Lock()
	h := m.hold
	m.mu.Unlock()
	return h != nil && h.Err() == nil
}

// endpoints is the running --http server.
type endpoints struct {
	srv  *http.Server
	done chan struct{}
}

// serveHTTP starts --http's server, if asked; stop ends it (a nil
// *endpoints does nothing).
func (a *app) serveHTTP(inv *invocation) (*endpoints, error) {
	o := &inv.opts.hold
	if o.http == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", o.http)
	if err != nil {
		return nil, fmt.Errorf("--http: %w", err)
	}
	host, _, _ := net.SplitHostPort(o.http)
	hosts := servedHosts(o.http, ln.Addr(), &exposeOpts{allowedHosts: o.allowedHosts, loopback: isLoopback(host)})
	m := a.mon
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		ok, st := m.usable()
		text := "session " + st.String()
		if bad := m.unhealthy(); bad != "" {
			role := "standby"
			if m.leading() {
				role = "leader"
			}
			text += "\n" + role + " but " + bad
		}
		reply(w, ok, text)
	})
	mux.HandleFunc("GET /leader", func(w http.ResponseWriter, _ *http.Request) {
		if m.leading() {
			if bad := m.unhealthy(); bad != "" {
				reply(w, false, "leader of "+m.path+" but "+bad)
				return
			}
			reply(w, true, "leader of "+m.path)
			return
		}
		reply(w, false, "not leader of "+m.path)
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = m.rec.WriteText(w)
	})
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.ContainsFunc(hosts, func(h string) bool { return strings.EqualFold(h, r.Host) }) {
			http.Error(w, "403 forbidden: this server does not answer to the Host "+fmt.Sprintf("%q", r.Host)+" (--allowed-hosts)",
				http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
	e := &endpoints{
		srv: &http.Server{Handler: guard, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 10 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10},
		done: make(chan struct{}),
	}
	go func() {
		defer close(e.done)
		_ = e.srv.Serve(ln)
	}()
	a.log.Info("serving /healthz, /leader, /metrics", "addr", ln.Addr().String(), "path", inv.path)
	return e, nil
}

func reply(w http.ResponseWriter, ok bool, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintln(w, text)
}

// stop ends the server: requests in flight get a second to finish.
func (e *endpoints) stop() {
	if e == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if e.srv.Shutdown(ctx) != nil {
		e.srv.Close()
	}
	<-e.done
}
