package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// The liveness model on its own: a session with no connection, driven by
// the events go-zookeeper delivers to its callback (onEvent) and by what
// the tap reads off the stream (heard, negotiated, dialSid), in a synctest
// bubble, so that each state change and loss is checked at its exact
// virtual time. Against real servers, the integration tests check the
// same model's order relative to a server's expiry and another client's
// acquire, which a bubble cannot hold.

// liveStep is one thing that happens to a session at a virtual time.
type liveStep struct {
	at time.Duration
	do func(*liveSession)
}

// seen is what the session reported, and when: a state, or a hold lost
// for a reason ("suspended", "expired").
type seen struct {
	at    time.Duration
	state State
	lost  string
}

func (s seen) String() string {
	if s.lost != "" {
		return fmt.Sprintf("%v lost (%s)", s.at, s.lost)
	}
	return fmt.Sprintf("%v %v", s.at, s.state)
}

// liveSession is a session without a connection and the reports of its
// observer.
type liveSession struct {
	*Session
	start time.Time
	mu    sync.Mutex
	seen  []seen
}

func newLiveSession(opts ...SessionOption) *liveSession {
	l := &liveSession{start: time.Now()}
	cfg := defaultSessionConfig()
	for _, o := range append(opts, WithObserver(l.observe)) {
		o(&cfg)
	}
	l.Session = &Session{cfg: cfg, log: cfg.logger, epoch: l.start, changed: make(chan struct{}),
		holds: make(map[string]*hold), quit: make(chan struct{})}
	l.cleaner.s = l.Session
	return l
}

func (l *liveSession) observe(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := time.Since(l.start)
	switch {
	case ev.Kind == EventState:
		l.seen = append(l.seen, seen{at: at, state: ev.State})
	case ev.Kind == EventLost && errors.Is(ev.Err, ErrSuspended):
		l.seen = append(l.seen, seen{at: at, lost: "suspended"})
	case ev.Kind == EventLost && errors.Is(ev.Err, ErrSessionExpired):
		l.seen = append(l.seen, seen{at: at, lost: "expired"})
	}
}

// The events and readings the steps are made of.

func event(st zk.State) func(*liveSession) {
	return func(l *liveSession) { l.onEvent(zk.Event{Type: zk.EventSession, State: st}) }
}

// session: the server granted session sid (the tap read its answer).
func session(sid int64) func(*liveSession) {
	return func(l *liveSession) {
		l.dialSid.Store(sid)
		l.heard.Store(int64(time.Since(l.epoch)))
		l.onEvent(zk.Event{Type: zk.EventSession, State: zk.StateHasSession})
	}
}

// answered: the server answered a request sent now.
func answered(l *liveSession) { l.heard.Store(int64(time.Since(l.epoch))) }

// negotiated: the server granted session timeout d.
func negotiated(d time.Duration) func(*liveSession) {
	return func(l *liveSession) { l.negotiated.Store(int64(d)) }
}

// holding registers a hold of the current session.
func holding(l *liveSession) {
	ctx, cancel := context.WithCancelCause(context.Background())
	l.Session.mu.Lock()
	defer l.Session.mu.Unlock()
	h := &hold{s: l.Session, path: "/l", node: fmt.Sprintf("/l/_c_x-lock-%010d", len(l.holds)),
		sid: l.dialSid.Load(), ctx: ctx, cancel: cancel, count: 1}
	l.holds[h.node] = h
}

func TestLivenessTimers(t *testing.T) {
	const ms = time.Millisecond
	third := time.Second / 3
	for _, tc := range []struct {
		name  string
		opts  []SessionOption
		steps []liveStep
		want  []seen
	}{{
		name: "default loss limit: two thirds of the timeout from the last answer",
		opts: []SessionOption{WithSessionTimeout(time.Second)},
		steps: []liveStep{{0, session(1)}, {0, holding}, {50 * ms, answered},
			{200 * ms, event(zk.StateDisconnected)}},
		want: []seen{{0, StateConnected, ""}, {200 * ms, StateSuspended, ""},
			{50*ms + 2*third, 0, "suspended"}}, // 1s*2/3: 666,666,666 ns
	}, {
		name: "the loss limit follows the negotiated timeout",
		opts: []SessionOption{WithSessionTimeout(time.Second)},
		steps: []liveStep{{0, negotiated(600 * ms)}, {0, session(1)}, {0, holding},
			{100 * ms, event(zk.StateConnecting)}},
		want: []seen{{0, StateConnected, ""}, {100 * ms, StateSuspended, ""}, {400 * ms, 0, "suspended"}},
	}, {
		name:  "loss limit 0: suspended is lost",
		opts:  []SessionOption{WithLossLimit(0)},
		steps: []liveStep{{0, session(1)}, {0, holding}, {300 * ms, event(zk.StateDisconnected)}},
		want:  []seen{{0, StateConnected, ""}, {300 * ms, StateSuspended, ""}, {300 * ms, 0, "suspended"}},
	}, {
		name:  "a suspension noticed after the limit loses at once",
		opts:  []SessionOption{WithLossLimit(300 * ms)},
		steps: []liveStep{{0, session(1)}, {0, holding}, {500 * ms, event(zk.StateDisconnected)}},
		want:  []seen{{0, StateConnected, ""}, {500 * ms, StateSuspended, ""}, {500 * ms, 0, "suspended"}},
	}, {
		name: "a reconnect stops the timer; a later suspension counts from its own last answer",
		opts: []SessionOption{WithLossLimit(400 * ms)},
		steps: []liveStep{{0, session(1)}, {100 * ms, event(zk.StateDisconnected)},
			{350 * ms, session(1)}, {350 * ms, holding}, {380 * ms, event(zk.StateDisconnected)}},
		want: []seen{{0, StateConnected, ""}, {100 * ms, StateSuspended, ""}, {350 * ms, StateConnected, ""},
			{380 * ms, StateSuspended, ""}, {750 * ms, 0, "suspended"}},
	}, {
		name: "no loss limit: suspended until the server expires the session",
		opts: []SessionOption{WithLossLimit(-1)},
		steps: []liveStep{{0, session(1)}, {0, holding}, {200 * ms, event(zk.StateDisconnected)},
			{30 * time.Second, event(zk.StateExpired)}},
		want: []seen{{0, StateConnected, ""}, {200 * ms, StateSuspended, ""},
			{30 * time.Second, StateExpired, ""}, {30 * time.Second, 0, "expired"}},
	}, {
		name: "expiry: holds of the old session are lost when a new one is granted too",
		opts: []SessionOption{WithLossLimit(-1)},
		steps: []liveStep{{0, session(1)}, {0, holding}, {200 * ms, event(zk.StateDisconnected)},
			{700 * ms, session(2)}},
		want: []seen{{0, StateConnected, ""}, {200 * ms, StateSuspended, ""},
			{700 * ms, StateConnected, ""}, {700 * ms, 0, "expired"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newLiveSession(tc.opts...)
				for _, st := range tc.steps {
					time.Sleep(st.at - time.Since(l.start))
					st.do(l)
				}
				last := tc.want[len(tc.want)-1].at
				time.Sleep(last + time.Minute - time.Since(l.start)) // nothing more happens
				synctest.Wait()
				l.close()
				l.mu.Lock()
				defer l.mu.Unlock()
				require.Equal(t, fmt.Sprint(append(tc.want, seen{last + time.Minute, StateClosed, ""})), fmt.Sprint(l.seen))
			})
		})
	}
}

// close closes the session as Close does, without a connection to close.
func (l *liveSession) close() {
	l.Session.mu.Lock()
	l.setStateLocked(StateClosed)
	l.stopLossTimerLocked()
	close(l.quit)
	l.takeHoldsLocked(func(*hold) bool { return true })
	l.unlock()
	l.bg.Wait()
}
