package zklock

import (
	"bytes"
	"math"
	"net"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// tapConn is the connection the session gives go-zookeeper. It observes the
// byte streams without changing them, for facts go-zookeeper does not
// expose:
//
//   - when the server was last heard from, for the loss limit: the send
//     time of the latest request it answered (see answered);
//   - the session timeout and id the server granted, from the
//     ConnectResponse;
//   - the zxid of the reply to each of our creates, which is the created
//     node's czxid: the fencing token, read without the extra request an
//     Exists would cost (see token.go);
//   - for the listing pipelined behind a create (pipeline.go), when each
//     create request is written;
//   - which of our nodes the session has an armed data watch on: a getData
//     with a watch answered without error (see nodewatch.go).
//
// go-zookeeper writes every request with one Write call, so requests are
// parsed per Write (wire.ParsePathRequest); replies arrive in pieces and
// are framed by a wire.Scanner. Everything is recorded before the bytes
// reach go-zookeeper: a request before it is written, a reply while it is
// read. If the server's stream does not parse, the tap stops looking: the
// server counts as heard from whenever bytes arrive, and the engine falls
// back to reading the token with Exists and to listing after the create.
type tapConn struct {
	net.Conn
	s      *Session
	server string // as given to Connect
	scan   replyScanner

	mu       sync.Mutex
	wrote    bool             // the ConnectRequest (the first write) is out
	inflight []request        // written, oldest first; answered up to head
	head     int              // inflight[:head] is answered
	watches  map[int32]string // getData requests with a watch on one of our paths, by xid

	// The reconnect gate (see Read): gate is closed once go-zookeeper's
	// setWatches request is written; nil where none is expected.
	gate      chan struct{}
	gateOnce  sync.Once
	gatePast  bool  // the gate was waited for (by the reading goroutine)
	readBytes int64 // bytes read so far (by the reading goroutine)
	handshake int64 // length of the ConnectResponse frame, once read
}

// gateWait bounds the reconnect gate: go-zookeeper sends no setWatches when
// it has no watch to restore, and then there is nothing to order. The gate
// is set only when the session knows of a watch (restoresWatches), and it
// opens as soon as the request is written, so the bound is met only when
// that guess is wrong or the client is starved of CPU; 50 ms proved too
// short for the latter under the race detector on a loaded 2-core machine.
const gateWait = 250 * time.Millisecond

// request is one request on the wire: its xid (connectXid for the
// ConnectRequest) and when it was written.
type request struct {
	xid int32
	at  int64 // ns since the session's epoch
}

const (
	connectXid  = -1 << 31 // stands for the ConnectRequest, which has no xid
	maxInflight = 1 << 16  // beyond this the tap stops matching (and falls back)
	maxFrame    = 64 << 20 // the longest reply the tap frames
)

// replyScanner frames the server's side of the stream. first says that the
// stream starts with the ConnectResponse, as a new connection's does.
type replyScanner struct {
	first bool
	sc    wire.Scanner
	init  bool
}

// feed frames p, the next bytes read, passing each frame to c.reply. It
// returns an error once the stream does not parse; the scanner then stays
// broken.
func (r *replyScanner) feed(p []byte, c *tapConn) error {
	if !r.init {
		r.init = true
		r.sc = wire.Scanner{Max: maxFrame, Head: wire.ReplyHeaderLen, Handshake: r.first}
	}
	return r.sc.Feed(p, c.reply)
}

// broken reports whether the server's stream failed to parse.
func (r *replyScanner) broken() bool { return r.sc.Err() != nil }

func (c *tapConn) Write(p []byte) (int, error) {
	c.request(p)
	return c.Conn.Write(p)
}

// request records a request before it is written, so that its reply cannot
// be read before it is known: the first write is the ConnectRequest, every
// later one a whole request frame.
func (c *tapConn) request(p []byte) {
	c.mu.Lock()
	first := !c.wrote
	c.wrote = true
	c.mu.Unlock()
	if first {
		c.sending(connectXid)
		return
	}
	n, ok, err := wire.FrameLength(p, math.MaxInt32) // ours: no limit to check
	if !ok || err != nil {
		return
	}
	payload := p[4:min(n, len(p))]
	h, err := wire.ParseRequestHeader(payload)
	if err != nil {
		return
	}
	c.sending(h.Xid)
	if h.Type == wire.OpSetWatches {
		c.openGate()
	}
	if !wire.IsCreate(h.Type) && h.Type != wire.OpGetData {
		return
	}
	r, err := wire.ParsePathRequest(payload)
	switch {
	case err != nil:
	case !bytes.Contains(r.Path, []byte(ourNode)): // not one of ours
	case wire.IsCreate(r.Type):
		// Requests are written only after the handshake of their
		// connection, whose session dialSid is.
		c.s.creates.sent(r.Xid, string(r.Path), c.s.dialSid.Load())
	case r.Watch: // a getData with a watch
		c.watching(r.Xid, string(r.Path))
	}
}

// sending records that request xid is being written now.
func (c *tapConn) sending(xid int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.head > 0 && len(c.inflight) == cap(c.inflight) { // reuse the answered part
		c.inflight = c.inflight[:copy(c.inflight, c.inflight[c.head:])]
		c.head = 0
	}
	if len(c.inflight)-c.head < maxInflight {
		c.inflight = append(c.inflight, request{xid, int64(time.Since(c.s.epoch))})
	}
}

// pending returns the requests written and not yet answered, oldest first.
func (c *tapConn) pending() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]request(nil), c.inflight[c.head:]...)
}

// watching records a getData with a watch on one of our paths: once it is
// answered without error, the session has a data watch on the path.
func (c *tapConn) watching(xid int32, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watches == nil {
		c.watches = make(map[int32]string)
	}
	if len(c.watches) < maxInflight {
		c.watches[xid] = path
	}
}

// watched reports the path of the watched getData that xid answers, if any.
func (c *tapConn) watched(xid int32) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.watches[xid]
	delete(c.watches, xid)
	return p, ok
}

// answered is called for each reply: the server had our request in hand
// no earlier than we wrote it, so the session was alive then. That send
// time, not the reply's arrival, is when the server was last heard from:
// bytes that waited in a socket buffer while this process was paused (or a
// slow network held them) prove nothing about the server's clock, and
// counting them would postpone the loss signal by the length of the pause.
// ZooKeeper answers a session's requests in order, so the oldest request
// in flight with the reply's xid is the one answered.
func (c *tapConn) answered(xid int32) {
	if xid == wire.XidWatchEvent {
		return
	}
	c.mu.Lock()
	var at int64 = -1
	for i := c.head; i < len(c.inflight); i++ {
		if r := c.inflight[i]; r.xid == xid {
			at, c.head = r.at, i+1
			break
		}
	}
	if c.head == len(c.inflight) {
		c.inflight, c.head = c.inflight[:0], 0
	}
	c.mu.Unlock()
	if at >= 0 && at > c.s.heard.Load() {
		c.s.heard.Store(at)
	}
}

// Read reads from the server. On a reconnect that must restore watches, the
// first read after the handshake waits (at most gateWait) until
// go-zookeeper has written its setWatches request. go-zookeeper v1.0.4
// reads its last zxid for that request on one goroutine while its receive
// loop, already started, updates it from replies on another, with nothing
// ordering the two (a data race the race detector reports, and a stale
// zxid in the request). Holding back the first reply until the request is
// written orders them: the read, then the write, then every reply.
func (c *tapConn) Read(p []byte) (int, error) {
	if c.gate != nil && !c.gatePast && c.handshake > 0 && c.readBytes >= c.handshake {
		c.gatePast = true
		t := time.NewTimer(gateWait)
		select {
		case <-c.gate:
		case <-t.C:
		}
		t.Stop()
	}
	n, err := c.Conn.Read(p)
	c.readBytes += int64(n)
	if n > 0 && c.scan.feed(p[:n], c) != nil {
		// No frames to match: fall back to the arrival time.
		c.s.heard.Store(int64(time.Since(c.s.epoch)))
	}
	if err != nil && c.handshake == 0 && !c.scan.broken() {
		// The server went before granting a session: closed the connection
		// (a ZooKeeper that refuses clients, a TLS server that refused our
		// certificate after the handshake, as TLS 1.3 servers do) or did
		// not answer in time. Say why, as for a failed dial.
		c.s.connectFailed(c.server, &stageError{"session handshake", err})
	}
	return n, err
}

// reply handles the head of one frame from the server, as soon as it is
// read: before go-zookeeper, which reads the whole frame, can see it or
// anything after it.
func (c *tapConn) reply(f wire.Frame) {
	if f.Handshake {
		ms, sid, err := wire.ParseConnectResponseHead(f.Head)
		if err != nil {
			return
		}
		if ms > 0 {
			c.s.negotiated.Store(int64(time.Duration(ms) * time.Millisecond))
		}
		c.s.dialSid.Store(sid)
		c.handshake = 4 + int64(f.Len)
		c.answered(connectXid)
		c.s.connectSucceeded()
		return
	}
	h, err := wire.ParseReplyHeader(f.Head)
	if err != nil {
		return
	}
	c.answered(h.Xid)
	ok := h.Err == 0
	c.s.creates.replied(h.Xid, h.Zxid, ok)
	if p, watch := c.watched(h.Xid); watch && ok {
		// This reply precedes, in the stream, every notification of the
		// watch it set, so the session learns of the watch first.
		c.s.armedWatch(p)
	}
}

// openGate closes the reconnect gate once.
func (c *tapConn) openGate() {
	if c.gate != nil {
		c.gateOnce.Do(func() { close(c.gate) })
	}
}
