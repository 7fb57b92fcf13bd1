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
