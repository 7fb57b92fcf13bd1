package main

// The endpoints of a holding verb (--http ADDR): /healthz, /leader and
// /metrics, answered from what the session has reported (its observer) and
// the hold of the running term, never with a ZooKeeper request.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock"
)

// lossCauses are the values of zklock_losses_total's cause label, each
// always written (0 until it happens), so a rate is defined from the start.
var lossCauses = []string{"expired", "suspended", "deleted", "revoked", "resigned", "closed", "other"}

// lossCause names why a hold was lost.
func lossCause(err error) string {
	switch {
	case errors.Is(err, zklock.ErrSessionExpired):
		return "expired"
	case errors.Is(err, zklock.ErrSuspended):
		return "suspended"
	case errors.Is(err, zklock.ErrNodeGone):
		return "deleted"
	case errors.Is(err, zklock.ErrRevoked), errors.Is(err, errRevocationRequested):
		return "revoked"
	case errors.Is(err, zklock.ErrResigned):
		return "resigned"
	case errors.Is(err, zklock.ErrClosed):
		return "closed"
	}
	return "other"
}

// sessionStates are the values of zklock_session_state's state label.
var sessionStates = []zklock.State{zklock.StateConnecting, zklock.StateConnected, zklock.StateSuspended,
	zklock.StateExpired, zklock.StateClosed}

// monitor follows a holding verb's session (as its observer) and the hold
// of its current term. It is safe for concurrent use.
type monitor struct {
	path      string
	lossLimit time.Duration // --loss-limit, if lossSet
	lossSet   bool
	session   *zklock.Session // set once connected, before the server starts

	mu          sync.Mutex
	state       zklock.State
	suspendedAt time.Time // when the current suspension began
	hold        *zklock.Hold
	changes     uint64 // session state changes
	acquires    uint64 // acquisitions started
	losses      map[string]uint64
	holdSum     time.Duration // holds ended: their total length
	holdCount   uint64        // and their number
	health      healthState   // elect --health-cmd (health.go)
}

func newMonitor(path string, cfg *config) *monitor {
	return &monitor{path: path, lossLimit: cfg.lossLimit, lossSet: cfg.lossSet, losses: map[string]uint64{}}
}

// observe is the session's observer (zklock.WithObserver): it must not block.
func (m *monitor) observe(ev zklock.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case zklock.EventState:
		if ev.State != m.state {
			m.changes++
		}
		m.state = ev.State
		if ev.State == zklock.StateSuspended {
			m.suspendedAt = time.Now()
		}
	case zklock.EventAcquiring:
		m.acquires++
	case zklock.EventLost:
		m.losses[lossCause(ev.Err)]++
		m.holdSum += ev.Held
		m.holdCount++
	case zklock.EventReleased:
		m.holdSum += ev.Held
		m.holdCount++
	}
}

// held records the hold of the current term; nil once it is over.
func (m *monitor) held(h *zklock.Hold) {
	m.mu.Lock()
	m.hold = h
	m.mu.Unlock()
}

// revoked counts a revocation that ended a hold (the library reports it
// as a release: zklock releases on request).
func (m *monitor) revoked() {
	m.mu.Lock()
	m.losses["revoked"]++
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

// writeMetrics writes the metrics in Prometheus' text format (version
// 0.0.4). Names are shared with contrib/prometheus.
func (m *monitor) writeMetrics(w io.Writer) {
	lead := 0
	if m.leading() {
		lead = 1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	metric := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	metric("zklock_is_leader", "gauge", "1 while this process leads the election (or holds the lock) at path, else 0.")
	fmt.Fprintf(&b, "zklock_is_leader{path=%s} %d\n", labelValue(m.path), lead)
	metric("zklock_session_state", "gauge", "1 for the session's current state, 0 for the others.")
	for _, st := range sessionStates {
		v := 0
		if st == m.state {
			v = 1
		}
		fmt.Fprintf(&b, "zklock_session_state{state=%s} %d\n", labelValue(st.String()), v)
	}
	metric("zklock_session_state_changes_total", "counter", "Changes of the session's state (a suspension between scrapes counts).")
	fmt.Fprintf(&b, "zklock_session_state_changes_total %d\n", m.changes)
	metric("zklock_acquire_retries_total", "counter", "Acquisitions started again after the first (a --requeue campaign, a retry).")
	fmt.Fprintf(&b, "zklock_acquire_retries_total %d\n", max(m.acquires, 1)-1)
	metric("zklock_losses_total", "counter", "Holds lost, by cause.")
	for _, c := range lossCauses {
		fmt.Fprintf(&b, "zklock_losses_total{cause=%s} %d\n", labelValue(c), m.losses[c])
	}
	metric("zklock_hold_seconds", "summary", "How long holds lasted, counted when they end.")
	fmt.Fprintf(&b, "zklock_hold_seconds_sum %g\nzklock_hold_seconds_count %d\n", m.holdSum.Seconds(), m.holdCount)
	_, _ = io.WriteString(w, b.String())
}

// labelValue quotes a label value as the text format wants.
func labelValue(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
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
		m.writeMetrics(w)
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
