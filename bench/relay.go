package bench

import (
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// relay is a counting TCP relay in front of one ZooKeeper server: it
// forwards frames unchanged and counts the client requests by opcode (pings
// excluded) and the watch notifications the server delivers. The herd
// measurement connects every client of one run through it, whatever its
// language, so the counts are comparable. Relays in front of the members of
// an ensemble share one recorder, which also keeps a timeline of the frames
// (see frame) when asked to.
type relay struct {
	ln     net.Listener
	target string
	member string // the member's name in the census ("standalone", "follower1", "leader")
	rec    *recorder

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// recorder holds what the relays sharing it saw since its last Reset.
type recorder struct {
	mu       sync.Mutex
	reqs     map[int32]int
	notifs   int
	timeline bool
	frames   []frame
	began    time.Time
	nextConn int
	pending  map[int]map[int32]frame // per connection, requests by xid until answered
}

// frame is one frame in the timeline: a request, its reply, or a watch
// notification, on connection conn of member.
type frame struct {
	t        time.Duration // since the recorder's Reset
	conn     int
	member   string
	toServer bool
	op       int32  // a request's opcode, also on its reply
	xid      int32  // wire.XidWatchEvent for a notification
	path     string // a request's path; a create's reply: the node created; a notification's node
	err      int32  // a reply's error code
}

func newRecorder() *recorder {
	return &recorder{reqs: map[int32]int{}, began: time.Now(), pending: map[int]map[int32]frame{}}
}

func newRelay(target string) (*relay, error) { return newRelayOn(target, "standalone", newRecorder()) }

// newRelayOn starts a relay to target, named member, recording into rec.
func newRelayOn(target, member string, rec *recorder) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, target: target, member: member, rec: rec, conns: map[net.Conn]struct{}{}}
	r.wg.Go(r.accept)
	return r, nil
}

// Addr is the host:port clients connect to.
func (r *relay) Addr() string { return r.ln.Addr().String() }

// Reset zeroes the counts (of every relay sharing the recorder).
func (r *relay) Reset() { r.rec.Reset(false) }

// Counts returns the requests by opcode and the notifications since Reset.
func (r *relay) Counts() (reqs map[int32]int, total, notifs int) { return r.rec.Counts() }

// Reset zeroes the counts and the timeline; with timeline, frames are
// recorded from now on.
func (rc *recorder) Reset(timeline bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.reqs, rc.notifs = map[int32]int{}, 0
	rc.timeline, rc.frames, rc.began = timeline, nil, time.Now()
	rc.pending = map[int]map[int32]frame{}
}

// Counts returns the requests by opcode and the notifications since Reset.
func (rc *recorder) Counts() (reqs map[int32]int, total, notifs int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	reqs = make(map[int32]int, len(rc.reqs))
	for op, n := range rc.reqs {
		reqs[op] = n
		total += n
	}
	return reqs, total, rc.notifs
}

// Frames returns the timeline since Reset.
func (rc *recorder) Frames() []frame {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]frame(nil), rc.frames...)
}

// Close stops accepting, cuts every connection and waits for the relay's
// goroutines.
func (r *relay) Close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	_ = r.ln.Close()
	r.wg.Wait()
}

func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *relay) accept() {
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", r.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !r.track(client) || !r.track(server) {
			_ = client.Close()
			_ = server.Close()
			return
		}
		r.rec.mu.Lock()
		id := r.rec.nextConn
		r.rec.nextConn++
		r.rec.mu.Unlock()
		r.wg.Go(func() { r.pipe(client, server, id, true) })
		r.wg.Go(func() { r.pipe(server, client, id, false) })
	}
}

// pipe copies frames from src to dst, counting them, and closes both ends
// when either side ends.
func (r *relay) pipe(src, dst net.Conn, conn int, toServer bool) {
	defer func() {
		_ = src.Close()
		_ = dst.Close()
	}()
	for first := true; ; first = false {
		f, err := wire.ReadFrame(src, wire.DefaultMaxFrame)
		if err != nil {
			return // EOF or a cut connection: the client is done or reconnects
		}
		if !first {
			r.rec.see(f, conn, r.member, toServer)
		}
		if err := wire.WriteFrame(dst, f); err != nil {
			return
		}
	}
}

// see counts one frame and, when recording, adds it to the timeline.
func (rc *recorder) see(f []byte, conn int, member string, toServer bool) {
	if toServer {
		h, err := wire.ParseRequestHeader(f)
		if err != nil || h.Type == wire.OpPing || h.Type == wire.OpCloseSession {
			return
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		rc.reqs[h.Type]++
		if rc.timeline && h.Xid >= 0 {
			fr := frame{t: time.Since(rc.began), conn: conn, member: member, toServer: true, op: h.Type, xid: h.Xid, path: leadingPath(f[wire.RequestHeaderLen:], h.Type)}
			if rc.pending[conn] == nil {
				rc.pending[conn] = map[int32]frame{}
			}
			rc.pending[conn][h.Xid] = fr
			rc.frames = append(rc.frames, fr)
		}
		return
	}
	h, err := wire.ParseReplyHeader(f)
	if err != nil || (h.Xid < 0 && h.Xid != wire.XidWatchEvent) {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if h.Xid == wire.XidWatchEvent {
		rc.notifs++
	}
	if !rc.timeline {
		return
	}
	fr := frame{t: time.Since(rc.began), conn: conn, member: member, xid: h.Xid, err: h.Err}
	body := f[wire.ReplyHeaderLen:]
	if h.Xid == wire.XidWatchEvent {
		if len(body) >= 8 { // type, state, then the path
			fr.path = readString(body[8:])
		}
	} else {
		req, ok := rc.pending[conn][h.Xid]
		if !ok {
			return // asked before the recording began
		}
		delete(rc.pending[conn], h.Xid)
		fr.op = req.op
		fr.path = req.path
		if wire.IsCreate(req.op) && h.Err == 0 {
			fr.path = readString(body)
		}
	}
	rc.frames = append(rc.frames, fr)
}

// leadingPath is the path a request of type op starts its body with, or "".
func leadingPath(body []byte, op int32) string {
	switch op {
	case wire.OpCreate, wire.OpDelete, wire.OpExists, wire.OpGetData, wire.OpSetData, wire.OpGetChildren,
		wire.OpSync, wire.OpGetChildren2, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL,
		wire.OpCheckWatches, wire.OpRemoveWatches, wire.OpAddWatch:
		return readString(body)
	}
	return ""
}

// readString reads a jute string (int32 length, bytes); "" if malformed.
func readString(b []byte) string {
	if len(b) < 4 {
		return ""
	}
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 || int(n) > len(b)-4 {
		return ""
	}
	return string(b[4 : 4+n])
}
