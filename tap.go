package zklock

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/wire"
)

// dial is the dialer the session gives go-zookeeper: the configured dialer,
// wrapped so the session knows when a server was last heard from and what
// session timeout and id the server granted.
func (s *Session) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := s.cfg.dialer(network, addr, timeout)
	if err != nil {
		s.failures.record(addr, err)
		return nil, err
	}
	// What no ZooKeeper sends fails the read; a reply over the bound fails
	// its request alone (replybound.go).
	c = &boundConn{Conn: c, max: s.cfg.maxReply, failed: func(err error) { s.failures.violation(addr, err) }}
	// A dial that succeeds proves nothing about our session: heard moves
	// only when the server answers (see tapConn.answered).
	t := &tapConn{Conn: c, s: s, server: addr, scan: replyScanner{first: true, max: max(s.cfg.maxReply, maxFrame)}}
	t.answerIn = s.answerWithin()
	t.answerBy = time.Now().Add(t.answerIn)
	if s.restoresWatches() {
		t.gate = make(chan struct{})
	}
	return t, nil
}

// answerWithin is how long a server that accepted a connection has to
// answer its ConnectRequest: the session timeout shared among at least
// three servers, and at least minAnswer unless that is more than half the
// timeout (docs/internals.md#the-handshake-bound).
func (s *Session) answerWithin() time.Duration {
	t := time.Duration(s.negotiated.Load())
	if t <= 0 {
		t = s.cfg.timeout
	}
	return answerBound(t, s.hosts.Len())
}

// answerBound is answerWithin for session timeout t and n servers.
func answerBound(t time.Duration, n int) time.Duration {
	d := t / time.Duration(max(n, minShare))
	if d < minAnswer {
		d = min(minAnswer, t/2)
	}
	return d
}

const (
	// minAnswer is the least time a server has to answer a ConnectRequest,
	// so that a loaded ensemble with a short session timeout is reached.
	minAnswer = time.Second
	// minShare is the least number of shares the session timeout is cut
	// into for the handshake bound.
	minShare = 3
)

// restoresWatches reports whether a reconnect now is likely to make
// go-zookeeper restore watches (see tapConn.Read).
func (s *Session) restoresWatches() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid != 0 && (len(s.holds) > 0 || len(s.armed) > 0 || s.handoffs.any())
}

// tlsDialer runs TLS over d's connections, each handshake bounded by
// handshake; their failures carry the reason (see tlsreason.go).
func tlsDialer(d zk.Dialer, cfg *tls.Config, handshake time.Duration) zk.Dialer {
	return func(network, addr string, timeout time.Duration) (net.Conn, error) {
		raw, err := d(network, addr, timeout)
		if err != nil {
			return nil, err
		}
		tc := cfg.Clone()
		if tc.ServerName == "" && !tc.InsecureSkipVerify {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			tc.ServerName = host
		}
		req := &certRequest{}
		tc.GetClientCertificate = req.choose(cfg)
		ctx, cancel := context.WithTimeout(context.Background(), handshake)
		defer cancel()
		conn := tls.Client(raw, tc)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, &stageError{"TLS handshake", req.explain(err)}
		}
		return &tlsConn{Conn: conn, req: req}, nil
	}
}

// tapConn is the connection the session gives go-zookeeper. It reads the
// byte streams without changing them, for what go-zookeeper does not
// expose (docs/protocol.md#the-tap). A request is recorded before it is
// written, a reply while it is read; if the server's stream does not
// parse, the tap stops looking and the engine falls back to plain requests.
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

	// The handshake bound (see SetReadDeadline), by the reading goroutine.
	answerIn time.Duration
	answerBy time.Time // when the ConnectResponse must be in; zero once it is
	asked    time.Time // the read deadline go-zookeeper last asked for
	respLen  [4]byte   // the ConnectResponse's length prefix, as read
}

// gateWait bounds the reconnect gate (docs/internals.md#the-reconnect-gate).
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
	maxFrame    = 64 << 20 // the longest reply the tap frames, unless the session's bound is longer
)

// replyScanner frames the server's side of the stream. first says that the
// stream starts with the ConnectResponse, as a new connection's does.
type replyScanner struct {
	first bool
	max   int // the longest frame; 0: maxFrame
	sc    wire.Scanner
	init  bool
}

// feed frames p, the next bytes read, passing each frame to c.reply; once
// the stream does not parse, it returns an error and stays broken.
func (r *replyScanner) feed(p []byte, c *tapConn) error {
	if !r.init {
		r.init = true
		r.sc = wire.Scanner{Max: cmp.Or(r.max, maxFrame), Head: wire.ReplyHeaderLen, Handshake: r.first, Longer: notificationHead}
	}
	return r.sc.Feed(p, c.reply)
}

// notificationHead keeps the whole head a notification's path may fit in
// (see Session.notified); other replies are yielded on their header.
func notificationHead(head []byte) int {
	if h, err := wire.ParseReplyHeader(head); err == nil && h.Xid == wire.XidWatchEvent && h.Zxid > 0 {
		return wire.MaxHead
	}
	return 0
}

// broken reports whether the server's stream failed to parse.
func (r *replyScanner) broken() bool { return r.sc.Err() != nil }

func (c *tapConn) Write(p []byte) (int, error) {
	c.request(p)
	return c.Conn.Write(p)
}

// request records a request before it is written, so that its reply cannot
// be read first: the first write is the ConnectRequest, every later one a
// whole request frame.
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

// answered is called for each reply: the send time of the oldest request
// in flight with the reply's xid becomes when the server was last heard
// from (docs/internals.md#heard-from-at-send-time).
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
// go-zookeeper has written its setWatches request
// (docs/internals.md#the-reconnect-gate).
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
	c.answering(p[:n])
	c.readBytes += int64(n)
	if n > 0 && c.scan.feed(p[:n], c) != nil {
		// No frames to match: fall back to the arrival time.
		c.s.heard.Store(int64(time.Since(c.s.epoch)))
	}
	if err != nil && c.handshake == 0 && !c.scan.broken() {
		// The server went before granting a session (it refused clients,
		// or, as TLS 1.3 servers do, our certificate after the handshake):
		// say why, as for a failed dial.
		if !c.answerBy.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("no answer within %v: %w", c.answerIn, err)
		}
		c.s.failures.record(c.server, &stageError{"session handshake", err})
	}
	return n, err
}

// SetReadDeadline passes d on, but no later than answerBy until the whole
// ConnectResponse is read (docs/internals.md#the-handshake-bound).
func (c *tapConn) SetReadDeadline(d time.Time) error {
	c.asked = d
	if !c.answerBy.IsZero() && (d.IsZero() || d.After(c.answerBy)) {
		d = c.answerBy
	}
	return c.Conn.SetReadDeadline(d)
}

// SetDeadline sets both deadlines, the read one as SetReadDeadline does.
func (c *tapConn) SetDeadline(d time.Time) error {
	if err := c.Conn.SetWriteDeadline(d); err != nil {
		return err
	}
	return c.SetReadDeadline(d)
}

// answering follows p, the bytes just read at offset readBytes, until the
// ConnectResponse (a 4-byte length, then that many bytes) is in; then it
// lifts the handshake bound, restoring the deadline go-zookeeper asked for.
func (c *tapConn) answering(p []byte) {
	if c.answerBy.IsZero() {
		return
	}
	for i := c.readBytes; i < 4 && i-c.readBytes < int64(len(p)); i++ {
		c.respLen[i] = p[i-c.readBytes]
	}
	if read := c.readBytes + int64(len(p)); read >= 4 && read >= 4+int64(binary.BigEndian.Uint32(c.respLen[:])) {
		c.answerBy = time.Time{}
		_ = c.Conn.SetReadDeadline(c.asked)
	}
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
		c.s.failures.reset()
		return
	}
	h, err := wire.ParseReplyHeader(f.Head)
	if err != nil {
		return
	}
	if h.Xid == wire.XidWatchEvent {
		c.s.notified(h.Zxid, f.Head[wire.ReplyHeaderLen:])
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

// notified is called by the tap for each watch notification, in stream
// order and before go-zookeeper hands it to onNodeEvent: the zxid of a held
// node's deletion (ZooKeeper 3.9 and later) is kept for onNodeEvent. body
// is the frame's head after the ReplyHeader.
func (s *Session) notified(zxid int64, body []byte) {
	if zxid <= 0 {
		return // a server before 3.9
	}
	n, err := wire.ParseNotification(body)
	if err != nil || n.Type != wire.EventNodeDeleted {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.holds[n.Path] == nil {
		return
	}
	if s.deletedAt == nil {
		s.deletedAt = make(map[string]int64)
	}
	s.deletedAt[n.Path] = zxid
}

// openGate closes the reconnect gate once.
func (c *tapConn) openGate() {
	if c.gate != nil {
		c.gateOnce.Do(func() { close(c.gate) })
	}
}
