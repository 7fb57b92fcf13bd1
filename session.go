package zklock

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// A Session is a ZooKeeper connection that owns the liveness model every
// lock recipe relies on (see Connect). It is safe for concurrent use, and
// many locks may share one: each waiter watches only its own predecessor,
// and only its goroutine wakes when that node goes. Close the Session when
// done: its nodes then vanish with the ZooKeeper session.
type Session struct {
	conn  *zk.Conn
	cfg   sessionConfig
	log   *slog.Logger
	epoch time.Time // origin of the monotonic instants below
	quit  chan struct{}
	bg    sync.WaitGroup // the session's background work, waited for by Close
	hosts *hostList      // the servers, as go-zookeeper dials them (hosts.go)

	// Credentials (connect.go).
	ready   chan struct{} // closed once the credentials are in place
	authErr error         // why they are not, set before ready closes

	// What the tap reads off the connection (tap.go).
	heard        atomic.Int64 // when the latest request a server answered was sent (ns since epoch)
	negotiated   atomic.Int64 // negotiated session timeout (ns), 0 until known
	clipReported atomic.Bool  // a negotiated timeout other than the one asked was logged (connect.go)
	dialSid      atomic.Int64 // session id of the latest connect response
	creates      createTracker
	failures     connFailures // why connection attempts failed (connfail.go)

	mu sync.Mutex // guards the rest

	// The liveness model (liveness.go).
	state       State
	sid         int64
	changed     chan struct{} // closed and replaced on every state change
	pending     []Event       // state changes to report once mu is released (see unlock)
	lossTimer   *time.Timer
	lossFired   bool // the loss limit fired during the current suspension
	suspensions int  // counts suspensions, so a stale loss timer can tell
	connCtx     context.Context
	connCancel  context.CancelFunc // ends connCtx, which lasts while connected (see connectedAs)

	// Holds and their watches (hold.go, nodewatch.go).
	holds     map[string]*hold    // registered holds by their node's path
	armed     map[string]struct{} // our paths the session has a data watch on
	deletedAt map[string]int64    // held nodes whose deletion was notified, by the zxid the server named

	// Deletes in the background (delete.go) and the in-process handoff
	// (handoff.go).
	cleaner  cleaner
	handoffs handoffs

	era eraCache // the ensemble's era, per ZooKeeper session (era.go)
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

// Done returns a channel closed when the session is over for good: Close
// was called (the state is then StateClosed). An expiry does not close it:
// the session then gets a new ZooKeeper session and goes on (StateExpired,
// then StateConnected), though every hold of the old one is lost.
func (s *Session) Done() <-chan struct{} { return s.quit }

// Watch follows the session's State from now on: it emits the current
// state, then each change, and closes the channel (ending its goroutine)
// after StateClosed or when ctx ends. The channel has latest-value
// semantics: a slow reader never delays the session and receives the
// latest state, skipping those that came and went meanwhile, never the
// same state twice in a row. To count every change, or to see those of the
// first connect, use WithObserver. A nil ctx gives a closed channel.
func (s *Session) Watch(ctx context.Context) <-chan State {
	out := make(chan State)
	if ctx == nil {
		close(out)
		return out
	}
	go func() {
		defer close(out)
		state, _, changed := s.snapshot()
		sent, pending := State(-1), true
		for {
			var send chan State
			if pending {
				send = out
			}
			select {
			case send <- state:
				sent, pending = state, false
				if state == StateClosed {
					return
				}
			case <-changed:
				state, _, changed = s.snapshot()
				pending = state != sent
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
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

// mark returns how often servers have been reached so far: a connection
// record to compare with later (connFailures.since).
func (s *Session) mark() mark {
	return mark{reached: s.failures.reached.Load(), violated: s.failures.violated.Load()}
}

// snapshot returns the state, the session id it refers to, and a channel
// closed at the next state change.
func (s *Session) snapshot() (State, int64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.sid, s.changed
}

// connectedAs returns a context that lasts as long as the current
// connection, if the session is connected as ZooKeeper session sid: the
// bound of requests that must not wait for a dead connection.
func (s *Session) connectedAs(sid int64) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnected || s.sid != sid {
		return nil, false
	}
	return s.connCtx, true
}

func (s *Session) observe(ev Event) {
	if s.cfg.observer != nil {
		s.cfg.observer(ev)
	}
}

// unlock releases s.mu and then reports the state changes made under it,
// so an observer may call back into the session.
func (s *Session) unlock() {
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, ev := range pending {
		s.log.Info("zklock: session "+ev.State.String(), "session", fmt.Sprintf("0x%x", ev.Session))
		s.observe(ev)
	}
}

// goLocked runs f in the background unless the session is closed; s.mu is
// held, so Close cannot be waiting for the background work yet.
func (s *Session) goLocked(f func()) {
	if s.state != StateClosed {
		s.bg.Go(f)
	}
}

// createTracker matches our create requests (by path) with the zxids of
// their replies, which the tap reads off the byte stream: a create reply's
// zxid is the node's czxid, the fencing token (see docs/protocol.md#the-tap).
// It also tells a creator when its request has been written.
type createTracker struct {
	mu      sync.Mutex
	want    map[string]int           // paths of creates we want the zxid of
	xids    map[int32]string         // requests in flight
	zxids   map[string]int64         // zxids of successful replies
	written map[string]chan struct{} // closed when a create of the path is written
	in      map[string]int64         // the session the last create of the path was written in
}

// ourNode marks the paths of our contender nodes: only their creates and
// watches are tracked.
const ourNode = "/_c_"

// expect registers a create of path. The channel it returns is closed when
// the tap sees the request written; a request queued after that is written
// after the create.
func (t *createTracker) expect(path string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want == nil {
		t.want, t.xids, t.zxids = map[string]int{}, map[int32]string{}, map[string]int64{}
		t.written, t.in = map[string]chan struct{}{}, map[string]int64{}
	}
	t.want[path]++
	ch := t.written[path]
	if ch == nil {
		ch = make(chan struct{})
		t.written[path] = ch
	}
	return ch
}

// createSeen is what the tap saw of the last create of a path.
type createSeen struct {
	czxid   int64 // the zxid of its reply, the node's czxid, if replied
	replied bool
	in      int64 // the session it was written in, if sent
	sent    bool
}

// done returns what the tap saw of the last create of path and drops one
// registration of path.
func (t *createTracker) done(path string) createSeen {
	t.mu.Lock()
	defer t.mu.Unlock()
	var seen createSeen
	seen.czxid, seen.replied = t.zxids[path]
	seen.in, seen.sent = t.in[path]
	t.forgetLocked(path)
	return seen
}

// forgetLocked drops one registration of path (made by expect), and with
// the last one everything known about creates of path.
func (t *createTracker) forgetLocked(path string) {
	if t.want[path]--; t.want[path] > 0 {
		return
	}
	delete(t.want, path)
	delete(t.zxids, path)
	delete(t.written, path)
	delete(t.in, path)
	for xid, p := range t.xids {
		if p == path {
			delete(t.xids, xid)
		}
	}
}

// sent records a create request of path with the given xid, as the tap
// sees it being written in session sid; creates nobody expects are ignored.
func (t *createTracker) sent(xid int32, path string, sid int64) {
	if !strings.Contains(path, ourNode) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path] > 0 {
		t.xids[xid] = path
		t.in[path] = sid
		if ch := t.written[path]; ch != nil {
			close(ch)
			delete(t.written, path)
		}
	}
}

// replied records the reply to request xid: if it answers one of our
// creates and ok (the create succeeded), zxid is the new node's czxid.
func (t *createTracker) replied(xid int32, zxid int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, found := t.xids[xid]; found {
		delete(t.xids, xid)
		if ok {
			t.zxids[p] = zxid
		}
	}
}
