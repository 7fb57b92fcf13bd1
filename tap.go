package zklock

import (
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"time"
)

// tapConn is the connection the session gives go-zookeeper. It observes the
// byte streams without changing them, for facts go-zookeeper does not
// expose: when the server was last heard from (for the loss limit: the send
// time of the latest request it answered, see answered), the
// session timeout and id the server granted (from the ConnectResponse), and
// the zxid of the reply to each of our creates, which is the created node's
// czxid: the fencing token, read without the extra request that an Exists
// would cost (go-zookeeper has no Create2); and, for the listing pipelined
// behind a create (pipeline.go), when each create request is written.
// go-zookeeper writes every request with one Write call, so requests are
// parsed per Write; replies arrive in pieces and are framed by replyScanner.
// If anything does not parse, the tap stops looking and the engine falls
// back to reading the token with Exists and to listing after the create.
type tapConn struct {
	net.Conn
	s    *Session
	scan replyScanner

	mu       sync.Mutex
	wrote    bool             // the ConnectRequest (the first write) is out
	inflight []request        // written and not yet answered, oldest first
	watches  map[int32]string // getData requests with a watch on one of our paths, by xid
}

// request is one request on the wire: its xid (connectXid for the
// ConnectRequest) and when it was written.
type request struct {
	xid int32
	at  int64 // ns since the session's epoch
}

const (
	opCreate      = 1
	opGetData     = 4
	xidWatchEvent = -1       // a notification: answers no request
	connectXid    = -1 << 31 // stands for the ConnectRequest, which has no xid
	maxInflight   = 1 << 16  // beyond this the tap stops matching (and falls back)
)

func (c *tapConn) Write(p []byte) (int, error) {
	c.sending(p)
	// A create or getData request: length(4) xid(4) type(4) path(len 4 +
	// bytes), then for getData the watch flag (1 byte).
	if len(p) >= 16 {
		xid, op := int32(binary.BigEndian.Uint32(p[4:8])), int32(binary.BigEndian.Uint32(p[8:12]))
		n := int(binary.BigEndian.Uint32(p[12:16]))
		switch {
		case n <= 0 || 16+n > len(p):
		case op == opCreate:
			c.s.creates.sent(xid, string(p[16:16+n]))
		case op == opGetData && 16+n < len(p) && p[16+n] == 1:
			c.watching(xid, string(p[16:16+n]))
		}
	}
	return c.Conn.Write(p)
}

// watching records a getData with a watch on one of our paths: once it is
// answered without error, the session has a data watch on the path.
func (c *tapConn) watching(xid int32, path string) {
	if !strings.Contains(path, "/_c_") {
		return
	}
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

// sending records a request before it is written, so that its reply cannot
// be read before it is known.
func (c *tapConn) sending(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	xid := int32(connectXid)
	switch {
	case !c.wrote:
		c.wrote = true
	case len(p) >= 8:
		xid = int32(binary.BigEndian.Uint32(p[4:8]))
	default:
		return
	}
	if len(c.inflight) < maxInflight {
		c.inflight = append(c.inflight, request{xid, int64(time.Since(c.s.epoch))})
	}
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
	if xid == xidWatchEvent {
		return
	}
	c.mu.Lock()
	var at int64 = -1
	for i, r := range c.inflight {
		if r.xid == xid {
			at = r.at
			c.inflight = c.inflight[i+1:]
			break
		}
	}
	c.mu.Unlock()
	if at >= 0 && at > c.s.heard.Load() {
		c.s.heard.Store(at)
	}
}

func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.scan.feed(p[:n], c)
		if c.scan.broken { // no frames to match: fall back to the arrival time
			c.s.heard.Store(int64(time.Since(c.s.epoch)))
		}
	}
	return n, err
}

// replyScanner frames the server's stream: a 4-byte length, then the
// frame. It keeps the first 16 bytes of each frame, the ConnectResponse's
// protocolVersion, timeOut and sessionId for the first, and the reply header
// (xid, zxid, err) for the others, and skips the rest.
type replyScanner struct {
	first  bool
	broken bool
	head   [20]byte
	have   int // bytes of head collected
	want   int // bytes of head wanted (4 until the frame's length is known)
	rest   int // bytes of the frame after its head
	skip   int // bytes still to skip
}

const maxFrame = 64 << 20

func (r *replyScanner) feed(p []byte, c *tapConn) {
	for len(p) > 0 && !r.broken {
		if r.skip > 0 {
			k := min(r.skip, len(p))
			r.skip -= k
			p = p[k:]
			continue
		}
		if r.want == 0 {
			r.want = 4
		}
		k := copy(r.head[r.have:r.want], p)
		r.have += k
		p = p[k:]
		if r.have < r.want {
			return
		}
		if r.want == 4 {
			n := int(int32(binary.BigEndian.Uint32(r.head[:4])))
			if n < 0 || n > maxFrame {
				r.broken = true
				return
			}
			body := min(n, 16)
			r.want, r.rest = 4+body, n-body
			if body > 0 {
				continue
			}
		}
		r.frame(r.head[4:r.want], c)
		r.skip = r.rest
		r.have, r.want, r.rest = 0, 0, 0
	}
}

func (r *replyScanner) frame(b []byte, c *tapConn) {
	if len(b) < 16 {
		return
	}
	if r.first { // ConnectResponse: protocolVersion timeOut sessionId passwd
		r.first = false
		if ms := int32(binary.BigEndian.Uint32(b[4:8])); ms > 0 {
			c.s.negotiated.Store(int64(time.Duration(ms) * time.Millisecond))
		}
		c.s.dialSid.Store(int64(binary.BigEndian.Uint64(b[8:16])))
		c.answered(connectXid)
		return
	}
	xid := int32(binary.BigEndian.Uint32(b[0:4]))
	c.answered(xid)
	zxid := int64(binary.BigEndian.Uint64(b[4:12]))
	ok := binary.BigEndian.Uint32(b[12:16]) == 0
	c.s.creates.replied(xid, zxid, ok)
	if p, watch := c.watched(xid); watch && ok {
		// This reply precedes, in the stream, every notification of the
		// watch it set, so the session learns of the watch first.
		c.s.armedWatch(p)
	}
}

// createTracker matches our create requests (by path) with the zxids of
// their replies, and tells a creator when its request has been written.
type createTracker struct {
	mu      sync.Mutex
	want    map[string]int           // paths of creates we want the zxid of
	xids    map[int32]string         // requests in flight
	zxids   map[string]int64         // zxids of successful replies
	written map[string]chan struct{} // closed when a create of the path is written
}

// expect registers a create of path. The channel it returns is closed when
// the tap sees the create request being written to the connection (never,
// if the request does not parse or is not sent); go-zookeeper writes the
// requests of its send queue one at a time in queue order, so a request
// queued after that is written after the create.
func (t *createTracker) expect(path string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want == nil {
		t.want, t.xids, t.zxids = map[string]int{}, map[int32]string{}, map[string]int64{}
		t.written = map[string]chan struct{}{}
	}
	t.want[path]++
	ch := t.written[path]
	if ch == nil {
		ch = make(chan struct{})
		t.written[path] = ch
	}
	return ch
}

func (t *createTracker) forget(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path]--; t.want[path] > 0 {
		return
	}
	delete(t.want, path)
	delete(t.zxids, path)
	delete(t.written, path)
	for xid, p := range t.xids {
		if p == path {
			delete(t.xids, xid)
		}
	}
}

func (t *createTracker) sent(xid int32, path string) {
	if !strings.Contains(path, "/_c_") {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path] > 0 {
		t.xids[xid] = path
		if ch := t.written[path]; ch != nil {
			close(ch)
			delete(t.written, path)
		}
	}
}

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

// zxid returns the zxid of the last successful reply to a create of path.
func (t *createTracker) zxid(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	z, ok := t.zxids[path]
	return z, ok
}
