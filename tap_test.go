package zklock

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func frame(body []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(len(body))) // callers append the body
}

// The scanner finds the ConnectResponse and the reply headers however the
// stream is cut into reads, and skips bodies of any length.
func TestReplyScannerAnyFragmentation(t *testing.T) {
	var stream []byte
	connect := binary.BigEndian.AppendUint32(nil, 0)         // protocolVersion
	connect = binary.BigEndian.AppendUint32(connect, 4000)   // timeOut
	connect = binary.BigEndian.AppendUint64(connect, 0x1234) // sessionId
	connect = append(connect, 0, 0, 0, 16)                   // passwd length ...
	connect = append(connect, make([]byte, 16)...)
	stream = append(append(stream, frame(connect)...), connect...)
	reply := func(xid int32, zxid int64, errc int32, body int) {
		b := binary.BigEndian.AppendUint32(nil, uint32(xid))
		b = binary.BigEndian.AppendUint64(b, uint64(zxid))
		b = binary.BigEndian.AppendUint32(b, uint32(errc))
		b = append(b, make([]byte, body)...)
		stream = append(append(stream, frame(b)...), b...)
	}
	reply(7, 100, 0, 40)     // our create
	reply(-2, 0, 0, 0)       // a ping reply
	reply(-1, 0, 0, 300)     // a watch event
	reply(8, 101, -110, 0)   // our second create failed (NodeExists)
	reply(9, 102, 0, 100000) // someone else's large reply

	for _, step := range []int{1, 2, 3, 7, 16, 17, 1000, len(stream)} {
		s := &Session{epoch: time.Now()}
		s.creates.expect("/l/_c_a-lock-")
		s.creates.expect("/l/_c_b-lock-")
		s.creates.sent(7, "/l/_c_a-lock-")
		s.creates.sent(8, "/l/_c_b-lock-")
		s.creates.sent(9, "/l/other") // not expected: ignored
		c := &tapConn{s: s, scan: replyScanner{first: true}}
		for i := 0; i < len(stream); i += step {
			c.scan.feed(stream[i:min(i+step, len(stream))], c)
		}
		require.False(t, c.scan.broken, "step %d", step)
		require.Equal(t, int64(4*time.Second), s.negotiated.Load(), "step %d", step)
		require.Equal(t, int64(0x1234), s.dialSid.Load(), "step %d", step)
		z, ok := s.creates.zxid("/l/_c_a-lock-")
		require.True(t, ok, "step %d", step)
		require.Equal(t, int64(100), z)
		_, ok = s.creates.zxid("/l/_c_b-lock-")
		require.False(t, ok, "a failed create has no czxid")
		s.creates.forget("/l/_c_a-lock-")
		s.creates.forget("/l/_c_b-lock-")
		require.Empty(t, s.creates.want)
		require.Empty(t, s.creates.xids)
		require.Empty(t, s.creates.zxids)
	}
}

func TestReplyScannerGivesUpOnGarbage(t *testing.T) {
	s := &Session{epoch: time.Now()}
	c := &tapConn{s: s, scan: replyScanner{first: true}}
	c.scan.feed([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, c)
	require.True(t, c.scan.broken)
	c.scan.feed(make([]byte, 64), c) // and stays out of the way
}

// The server was last heard from when the latest request it answered was
// written, not when its reply happened to be read: a notification answers
// nothing, and replies read late (after a pause) do not move the time
// beyond the request's send time.
func TestTapHeardIsSendTimeOfAnsweredRequest(t *testing.T) {
	s := &Session{epoch: time.Now()}
	c := &tapConn{s: s, scan: replyScanner{first: true}}
	req := func(xid int32) []byte {
		b := binary.BigEndian.AppendUint32(nil, 8)
		b = binary.BigEndian.AppendUint32(b, uint32(xid))
		return binary.BigEndian.AppendUint32(b, 11) // opcode: ping
	}
	c.sending(make([]byte, 48)) // the ConnectRequest: no xid
	c.sending(req(1))
	c.sending(req(-2))
	c.sending(req(2))
	require.Len(t, c.inflight, 4)
	require.Equal(t, int32(connectXid), c.inflight[0].xid)
	for i := range c.inflight { // pretend they were written at 10, 20, 30, 40 ms
		c.inflight[i].at = int64(i+1) * int64(10*time.Millisecond)
	}
	reply := func(xid int32) []byte {
		b := binary.BigEndian.AppendUint32(nil, uint32(xid))
		b = binary.BigEndian.AppendUint64(b, 1)
		b = binary.BigEndian.AppendUint32(b, 0)
		return append(frame(b), b...)
	}
	connect := binary.BigEndian.AppendUint32(nil, 0)
	connect = binary.BigEndian.AppendUint32(connect, 4000)
	connect = binary.BigEndian.AppendUint64(connect, 0x1234)
	connect = append(connect, 0, 0, 0, 0)
	c.scan.feed(append(frame(connect), connect...), c)
	require.Equal(t, int64(10*time.Millisecond), s.heard.Load(), "the handshake counts from the ConnectRequest")
	c.scan.feed(reply(xidWatchEvent), c)
	require.Equal(t, int64(10*time.Millisecond), s.heard.Load(), "a notification answers nothing")
	c.scan.feed(reply(1), c)
	require.Equal(t, int64(20*time.Millisecond), s.heard.Load())
	c.scan.feed(reply(-2), c)
	require.Equal(t, int64(30*time.Millisecond), s.heard.Load())
	c.scan.feed(reply(99), c) // unknown xid: nothing to match
	require.Equal(t, int64(30*time.Millisecond), s.heard.Load())
	c.scan.feed(reply(2), c)
	require.Equal(t, int64(40*time.Millisecond), s.heard.Load())
	require.Empty(t, c.inflight)
}
