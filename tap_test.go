package zklock

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
)

// scriptConn is the server's end of a tapConn in tests: each Read returns
// the next queued chunk (io.EOF when none is left); writes are discarded.
type scriptConn struct {
	net.Conn
	reads [][]byte
}

func (c *scriptConn) Read(p []byte) (int, error) {
	if len(c.reads) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.reads[0])
	if n < len(c.reads[0]) {
		c.reads[0] = c.reads[0][n:]
	} else {
		c.reads = c.reads[1:]
	}
	return n, nil
}

func (c *scriptConn) Write(p []byte) (int, error) { return len(p), nil }

// tapRig is a tap on a new connection of a session that is not connected
// to anything.
type tapRig struct {
	s    *Session
	c    *tapConn
	conn *scriptConn
	buf  []byte
}

func newTapRig() *tapRig {
	s := &Session{epoch: time.Now()}
	conn := &scriptConn{}
	// As Session.dial makes it.
	return &tapRig{s: s, conn: conn, c: &tapConn{Conn: conn, s: s, scan: replyScanner{first: true}}, buf: make([]byte, 1<<16)}
}

// write has the tap write one frame with the given payload.
func (r *tapRig) write(t *testing.T, payload []byte) {
	t.Helper()
	_, err := r.c.Write(wire.AppendFrame(nil, payload))
	require.NoError(t, err)
}

// read has the tap read stream, in chunks of the given size.
func (r *tapRig) read(t *testing.T, stream []byte, chunk int) {
	t.Helper()
	for len(stream) > 0 {
		k := min(chunk, len(stream))
		if k > len(r.buf) {
			r.buf = make([]byte, k)
		}
		r.conn.reads = append(r.conn.reads, stream[:k])
		stream = stream[k:]
		n, err := r.c.Read(r.buf[:k])
		require.NoError(t, err)
		require.Equal(t, k, n)
	}
}

func connectRequest() []byte {
	return wire.EncodeConnectRequest(wire.ConnectRequest{TimeoutMs: 2000, Passwd: make([]byte, 16)})
}

func connectResponse(ms int32, sid int64) []byte {
	return wire.AppendFrame(nil, wire.EncodeConnectResponse(wire.ConnectResponse{TimeoutMs: ms, SessionID: sid, Passwd: make([]byte, 16)}))
}

// createRequest is the payload of a create (or createContainer, create2,
// createTTL) request of path.
func createRequest(xid, op int32, path string) []byte {
	p := wire.AppendPathRequest(nil, wire.RequestHeader{Xid: xid, Type: op}, path, false)
	p = append(p, 0, 0, 0, 0)                               // data: empty
	p = append(p, 0, 0, 0, 1, 0, 0, 0, 31, 0, 0, 0, 5)      // one ACL: perms 31, scheme ...
	p = append(p, "world"...)                               //
	p = append(p, 0, 0, 0, 6, 'a', 'n', 'y', 'o', 'n', 'e') // ... id
	p = binary.BigEndian.AppendUint32(p, 3)                 // flags: ephemeral sequential
	if op == wire.OpCreateTTL {
		p = binary.BigEndian.AppendUint64(p, 1000)
	}
	return p
}

func getDataRequest(xid int32, path string, watch bool) []byte {
	return wire.AppendPathRequest(nil, wire.RequestHeader{Xid: xid, Type: wire.OpGetData}, path, watch)
}

func pingRequest(xid int32) []byte {
	return wire.AppendRequestHeader(nil, wire.RequestHeader{Xid: xid, Type: wire.OpPing})
}

// reply is a reply frame with a body of the given length.
func reply(xid int32, zxid int64, errc int32, body int) []byte {
	p := wire.AppendReplyHeader(nil, wire.ReplyHeader{Xid: xid, Zxid: zxid, Err: errc})
	return wire.AppendFrame(nil, append(p, make([]byte, body)...))
}

const (
	errNoNode     = -101
	errNodeExists = -110
)

// The tap reads the ConnectResponse, the tokens and the armed watches
// however the server's stream is cut into reads, and skips bodies of any
// length.
func TestTapAnyFragmentation(t *testing.T) {
	var stream []byte
	stream = append(stream, connectResponse(4000, 0x1234)...)
	stream = append(stream, reply(1, 100, 0, 40)...)                 // our create
	stream = append(stream, reply(-2, 0, 0, 0)...)                   // a ping's reply
	stream = append(stream, reply(wire.XidWatchEvent, 0, 0, 300)...) // a notification
	stream = append(stream, reply(2, 101, errNodeExists, 0)...)      // our second create failed
	stream = append(stream, reply(3, 102, 0, 100000)...)             // a large reply
	stream = append(stream, reply(4, 103, 0, 90)...)                 // our watched getData

	for _, chunk := range []int{1, 2, 3, 7, 16, 17, 1000, len(stream)} {
		r := newTapRig()
		r.s.creates.expect("/l/_c_a-lock-")
		r.s.creates.expect("/l/_c_b-lock-")
		r.write(t, connectRequest())
		r.write(t, createRequest(1, wire.OpCreate, "/l/_c_a-lock-"))
		r.write(t, pingRequest(-2))
		r.write(t, createRequest(2, wire.OpCreate, "/l/_c_b-lock-"))
		r.write(t, createRequest(3, wire.OpCreate, "/l/other"))
		r.write(t, getDataRequest(4, "/l/_c_a-lock-0000000001", true))
		r.read(t, stream, chunk)

		require.False(t, r.c.scan.broken(), "chunk %d", chunk)
		require.Equal(t, int64(4*time.Second), r.s.negotiated.Load(), "chunk %d", chunk)
		require.Equal(t, int64(0x1234), r.s.dialSid.Load(), "chunk %d", chunk)
		z, ok := r.s.creates.zxid("/l/_c_a-lock-")
		require.True(t, ok, "chunk %d", chunk)
		require.Equal(t, int64(100), z)
		_, ok = r.s.creates.zxid("/l/_c_b-lock-")
		require.False(t, ok, "a failed create has no czxid")
		require.Equal(t, map[string]struct{}{"/l/_c_a-lock-0000000001": {}}, r.s.armed, "chunk %d", chunk)
		require.Empty(t, r.c.pending())
		require.Empty(t, r.c.watches)
	}
}

// A stream that does not parse turns the tap off: from then on the server
// counts as heard from whenever bytes arrive, and nothing else is read.
func TestTapGivesUpOnGarbage(t *testing.T) {
	r := newTapRig()
	r.write(t, connectRequest())
	r.read(t, []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, 100)
	require.True(t, r.c.scan.broken())
	first := r.s.heard.Load()
	require.Positive(t, first, "the arrival time")
	require.Eventually(t, func() bool { return int64(time.Since(r.s.epoch)) > first }, time.Second, time.Millisecond)
	r.read(t, connectResponse(4000, 7), 100) // and stays out of the way
	require.Greater(t, r.s.heard.Load(), first, "heard moves with each read")
	require.Zero(t, r.s.negotiated.Load())
	require.Zero(t, r.s.dialSid.Load())
}

// A frame longer than the tap's limit also turns it off.
func TestTapGivesUpOnOversizedFrame(t *testing.T) {
	r := newTapRig()
	r.write(t, connectRequest())
	r.read(t, connectResponse(4000, 7), 100)
	r.read(t, binary.BigEndian.AppendUint32(nil, maxFrame+1), 100)
	require.True(t, r.c.scan.broken())
	require.Equal(t, int64(7), r.s.dialSid.Load(), "what was read before stays")
}

// The first write is the ConnectRequest: it is never parsed as a request,
// whatever its bytes look like.
func TestTapFirstWriteIsTheConnectRequest(t *testing.T) {
	r := newTapRig()
	r.s.creates.expect("/l/_c_a-lock-")
	// A ConnectRequest whose bytes would parse as create request 0.
	r.write(t, createRequest(0, wire.OpCreate, "/l/_c_a-lock-"))
	pending := r.c.pending()
	require.Len(t, pending, 1)
	require.Equal(t, int32(connectXid), pending[0].xid)
	r.read(t, connectResponse(4000, 7), 100)
	r.read(t, reply(0, 55, 0, 0), 100)
	_, ok := r.s.creates.zxid("/l/_c_a-lock-")
	require.False(t, ok)
}

// The server was last heard from when the latest request it answered was
// written, not when its reply happened to be read: a notification answers
// nothing, and replies read late (after a pause) do not move the time
// beyond the request's send time.
func TestTapHeardIsSendTimeOfAnsweredRequest(t *testing.T) {
	r := newTapRig()
	r.write(t, connectRequest()) // no xid
	r.write(t, pingRequest(1))
	r.write(t, pingRequest(-2))
	r.write(t, pingRequest(2))
	pending := r.c.pending()
	require.Len(t, pending, 4)
	require.Equal(t, int32(connectXid), pending[0].xid)
	for i := range r.c.inflight { // pretend they were written at 10, 20, 30, 40 ms
		r.c.inflight[i].at = int64(i+1) * int64(10*time.Millisecond)
	}
	r.read(t, connectResponse(4000, 0x1234), 100)
	require.Equal(t, int64(10*time.Millisecond), r.s.heard.Load(), "the handshake counts from the ConnectRequest")
	r.read(t, reply(wire.XidWatchEvent, 1, 0, 0), 100)
	require.Equal(t, int64(10*time.Millisecond), r.s.heard.Load(), "a notification answers nothing")
	r.read(t, reply(1, 1, 0, 0), 100)
	require.Equal(t, int64(20*time.Millisecond), r.s.heard.Load())
	r.read(t, reply(-2, 1, 0, 0), 100)
	require.Equal(t, int64(30*time.Millisecond), r.s.heard.Load())
	r.read(t, reply(99, 1, 0, 0), 100) // unknown xid: nothing to match
	require.Equal(t, int64(30*time.Millisecond), r.s.heard.Load())
	r.read(t, reply(2, 1, 0, 0), 100)
	require.Equal(t, int64(40*time.Millisecond), r.s.heard.Load())
	require.Empty(t, r.c.pending())
}

// The record of requests in flight does not grow while requests are
// answered: answered entries are reused.
func TestTapInflightIsReused(t *testing.T) {
	r := newTapRig()
	r.write(t, connectRequest())
	r.read(t, connectResponse(4000, 1), 100)
	for xid := int32(1); xid <= 1000; xid++ {
		r.write(t, pingRequest(xid))
		r.write(t, pingRequest(-2))
		r.read(t, reply(xid, 1, 0, 0), 100)
		require.Len(t, r.c.pending(), 1)
		r.read(t, reply(-2, 1, 0, 0), 100)
	}
	require.Empty(t, r.c.pending())
	require.LessOrEqual(t, cap(r.c.inflight), 4)
}

// The tap records a data watch on one of our nodes when a getData with a
// watch on it is answered without error, and only then.
func TestTapArmedWatch(t *testing.T) {
	const node = "/l/_c_a-lock-0000000001"
	tests := []struct {
		name  string
		req   []byte
		reply []byte
		armed bool
	}{
		{"watched getData answered", getDataRequest(1, node, true), reply(1, 9, 0, 80), true},
		{"the node is gone", getDataRequest(1, node, true), reply(1, 9, errNoNode, 0), false},
		{"no watch", getDataRequest(1, node, false), reply(1, 9, 0, 80), false},
		{"not one of our nodes", getDataRequest(1, "/l/other", true), reply(1, 9, 0, 80), false},
		{"a reply to another request", getDataRequest(1, node, true), reply(2, 9, 0, 80), false},
		{"a notification", getDataRequest(1, node, true), reply(wire.XidWatchEvent, 0, 0, 40), false},
		{"a create of the path", createRequest(1, wire.OpCreate, node), reply(1, 9, 0, 40), false},
		{"a truncated getData", getDataRequest(1, node, true)[:20], reply(1, 9, 0, 80), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTapRig()
			r.write(t, connectRequest())
			r.read(t, connectResponse(4000, 1), 100)
			r.write(t, tc.req)
			r.read(t, tc.reply, 7)
			if tc.armed {
				require.Equal(t, map[string]struct{}{node: {}}, r.s.armed)
			} else {
				require.Empty(t, r.s.armed)
			}
			require.False(t, r.c.scan.broken())
		})
	}
}

// The watch is recorded while its reply is read: as soon as the reply's
// header is in, before the Read that brings it returns, so before
// go-zookeeper can see the reply or any notification of the watch after it.
func TestTapArmedWatchBeforeTheReplyIsDelivered(t *testing.T) {
	const node = "/l/_c_a-lock-0000000001"
	r := newTapRig()
	r.write(t, connectRequest())
	r.read(t, connectResponse(4000, 1), 100)
	r.write(t, getDataRequest(5, node, true))
	stream := append(reply(5, 9, 0, 80), reply(wire.XidWatchEvent, 0, 0, 40)...)
	r.read(t, stream[:4+wire.ReplyHeaderLen-1], 100)
	require.Empty(t, r.s.armed, "the reply's header is not complete")
	r.conn.reads = append(r.conn.reads, stream[4+wire.ReplyHeaderLen-1:])
	n, err := r.c.Read(r.buf[:1]) // go-zookeeper has not seen the last header byte yet
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, map[string]struct{}{node: {}}, r.s.armed)
	r.read(t, r.conn.reads[0], 100) // the rest: the body, then the notification
	require.Empty(t, r.c.watches)
}

// loadStream reads a recorded connection (see BenchmarkTapStream): records
// of a direction byte ('W' for a write, 'R' for a read), a big-endian
// uint32 length and that many bytes.
func loadStream(tb testing.TB, name string) (events []streamEvent) {
	tb.Helper()
	b, err := os.ReadFile(name)
	require.NoError(tb, err)
	for len(b) > 0 {
		require.GreaterOrEqual(tb, len(b), 5, "%s: truncated record", name)
		n := int(binary.BigEndian.Uint32(b[1:5]))
		require.LessOrEqual(tb, n, len(b)-5, "%s: truncated record", name)
		events = append(events, streamEvent{b[0] == 'W', b[5 : 5+n]})
		b = b[5+n:]
	}
	return events
}

type streamEvent struct {
	write bool
	data  []byte
}

const recordedStream = "testdata/tap/lock-cycles.stream"

// recordedCreates returns the paths of our create requests in a recorded
// stream (the first write is the ConnectRequest), each once.
func recordedCreates(tb testing.TB, events []streamEvent) []string {
	var paths []string
	for _, e := range events[1:] {
		if !e.write {
			continue
		}
		r, err := wire.ParsePathRequest(e.data[4:])
		require.NoError(tb, err)
		if wire.IsCreate(r.Type) && bytes.Contains(r.Path, []byte(ourNode)) {
			paths = append(paths, string(r.Path))
		}
	}
	return slices.Compact(paths) // a retried create follows its first attempt
}

// tapReplay returns a new tap ready to replay a recorded stream: the
// server's chunks queued, the creates of paths expected.
func tapReplay(events []streamEvent, paths []string) *tapRig {
	r := newTapRig()
	for _, p := range paths {
		r.s.creates.expect(p)
	}
	for _, e := range events {
		if !e.write {
			r.conn.reads = append(r.conn.reads, e.data)
		}
	}
	return r
}

// replay plays a recorded stream through the tap as go-zookeeper would:
// the writes in order, each read of the size of the recorded chunk.
func (r *tapRig) replay(events []streamEvent) {
	for _, e := range events {
		if e.write {
			_, _ = r.c.Write(e.data)
		} else {
			_, _ = r.c.Read(r.buf[:len(e.data)])
		}
	}
}

// A session recorded against a real server (six Mutex lock cycles, the
// last one queued behind another session's hold: creates of the lock's
// parents, creates, listings, watched getData, the predecessor's deletion
// notification, deletes) gives every fact the tap reads.
func TestTapRecordedStream(t *testing.T) {
	events := loadStream(t, recordedStream)
	paths := recordedCreates(t, events)
	require.Len(t, paths, 6)
	r := tapReplay(events, paths)
	r.replay(events)
	require.False(t, r.c.scan.broken())
	require.Positive(t, r.s.negotiated.Load())
	require.NotZero(t, r.s.dialSid.Load())
	require.Positive(t, r.s.heard.Load())
	prev := int64(0)
	for _, p := range paths {
		z, ok := r.s.creates.zxid(p)
		require.True(t, ok, p)
		require.Greater(t, z, prev, "tokens grow")
		prev = z
	}
	// The last cycle's getData watched the predecessor, which was deleted
	// (the notification removes it from armed only in the session's event
	// callback, which a replay does not run); each watched hold node too.
	require.Len(t, r.s.armed, 3)
	require.Empty(t, r.c.pending())
}

// BenchmarkTapStream feeds the tap the recorded session of
// TestTapRecordedStream and counts what the tap allocates per session.
// (The stream was recorded with a WithDialer wrapper that logged each
// Write and each Read of go-zookeeper's connection.)
func BenchmarkTapStream(b *testing.B) {
	events := loadStream(b, recordedStream)
	paths := recordedCreates(b, events)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := tapReplay(events, paths)
		b.StartTimer()
		r.replay(events)
		b.StopTimer()
		if _, ok := r.s.creates.zxid(paths[len(paths)-1]); !ok || len(r.s.armed) == 0 {
			b.Fatal("the tap missed the stream")
		}
		b.StartTimer()
	}
}

// pending returns the requests written and not yet answered, oldest first.
func (c *tapConn) pending() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]request(nil), c.inflight[c.head:]...)
}

// The handshake bound is the session timeout shared among the servers, but
// among at least three, and at least a second unless that is more than half
// of the timeout.
func TestAnswerBound(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		servers int
		want    time.Duration
	}{
		{20 * time.Second, 1, 20 * time.Second / 3},
		{6 * time.Second, 2, 2 * time.Second},
		{6 * time.Second, 3, 2 * time.Second},
		{10 * time.Second, 5, 2 * time.Second},
		{4 * time.Second, 1, time.Second + time.Second/3},
		{2 * time.Second, 1, time.Second},
		{6 * time.Second, 12, time.Second},
		{time.Second, 3, time.Second / 2},
		{time.Second, 1, time.Second / 2},
	} {
		require.Equal(t, tc.want, answerBound(tc.timeout, tc.servers), "%v, %d servers", tc.timeout, tc.servers)
		require.Less(t, answerBound(tc.timeout, tc.servers), tc.timeout, "below the session timeout")
	}
}
