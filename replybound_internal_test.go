package zklock

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
)

// chunkConn serves a fixed byte stream in reads of at most size bytes.
type chunkConn struct {
	net.Conn
	r    *bytes.Reader
	size int
}

func (c *chunkConn) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.size)]) }

// replyFrame is a server frame: a ReplyHeader (xid, zxid, err) and body.
func replyFrame(xid int32, zxid int64, code int32, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(wire.ReplyHeaderLen+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(xid))
	b = binary.BigEndian.AppendUint64(b, uint64(zxid))
	b = binary.BigEndian.AppendUint32(b, uint32(code))
	return append(b, body...)
}

func handshakeFrame() []byte {
	p := wire.EncodeConnectResponse(wire.ConnectResponse{TimeoutMs: 4000, SessionID: 7, Passwd: make([]byte, 16)})
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(p))), p...)
}

// readFrames reads frames from c as go-zookeeper does (a length, then
// that many bytes) until the stream ends.
func readFrames(c net.Conn) ([][]byte, error) {
	var frames [][]byte
	for {
		var n [4]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return frames, nil
			}
			return frames, err
		}
		body := make([]byte, binary.BigEndian.Uint32(n[:]))
		if _, err := io.ReadFull(c, body); err != nil {
			return frames, err
		}
		frames = append(frames, append(n[:], body...))
	}
}

// A reply over the bound reaches go-zookeeper as a reply to the same xid
// with an error that carries its length, its body unread; every other
// frame passes unchanged, however the stream is cut into reads.
func TestBoundConnReplacesAReplyOverTheBound(t *testing.T) {
	const bound = 1 << 10
	long := bytes.Repeat([]byte{'x'}, 3*bound)
	notification := replyFrame(wire.XidWatchEvent, 9, 0, []byte("event"))
	stream := bytes.Join([][]byte{
		handshakeFrame(),
		replyFrame(1, 100, 0, []byte("small")),
		replyFrame(2, 101, 0, long),
		notification,
		replyFrame(3, 102, 0, bytes.Repeat([]byte{'y'}, bound-wire.ReplyHeaderLen)), // exactly the bound
	}, nil)
	want := [][]byte{
		handshakeFrame(),
		replyFrame(1, 100, 0, []byte("small")),
		replyFrame(2, 101, tooLongCode(int64(wire.ReplyHeaderLen+len(long))), nil),
		notification,
		replyFrame(3, 102, 0, bytes.Repeat([]byte{'y'}, bound-wire.ReplyHeaderLen)),
	}
	for _, size := range []int{1, 3, 4, 5, 19, 20, 21, 37, 4096, 1 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var failed []error
			c := &boundConn{Conn: &chunkConn{r: bytes.NewReader(stream), size: size}, max: bound,
				failed: func(err error) { failed = append(failed, err) }}
			got, err := readFrames(c)
			require.NoError(t, err)
			require.Equal(t, want, got)
			require.Empty(t, failed)
		})
	}

	// go-zookeeper's words for the code carry the length back.
	code := tooLongCode(int64(wire.ReplyHeaderLen + len(long)))
	length, ok := replyTooLong(fmt.Errorf("zk: list: %w", fmt.Errorf("unknown error: %v", code)))
	require.True(t, ok)
	require.EqualValues(t, wire.ReplyHeaderLen+len(long), length)
	require.True(t, permanent(fmt.Errorf("unknown error: %v", code)))
	for _, c := range []int32{-1, -5, -101, -130, 0} { // ZooKeeper's own codes are not ours
		_, ok := replyTooLong(fmt.Errorf("unknown error: %v", c))
		require.False(t, ok, "code %d", c)
	}
	require.Equal(t, int32(tooLongCeiling), tooLongCode(1<<31-1), "a length near 2 GiB stays clear of ZooKeeper's codes")
}

// What the protocol does not allow after the handshake ends the connection
// with its own error, recorded as a violation: never a silent skip, never
// "unreachable".
func TestBoundConnViolations(t *testing.T) {
	const bound = 1 << 10
	shortFrame := binary.BigEndian.AppendUint32(nil, 8)
	shortFrame = append(shortFrame, make([]byte, 8)...)
	cases := []struct {
		name  string
		frame []byte
		want  error
	}{
		{"short frame", shortFrame, ErrProtocol},
		{"negative length", []byte{0xff, 0xff, 0xff, 0xfe}, ErrProtocol},
		{"notification over the bound", replyFrame(wire.XidWatchEvent, 9, 0, make([]byte, 2*bound)), ErrReplyTooLong},
		{"ping over the bound", replyFrame(-2, 0, 0, make([]byte, 2*bound)), ErrReplyTooLong},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var failed []error
			stream := append(handshakeFrame(), tc.frame...)
			stream = append(stream, replyFrame(1, 1, 0, nil)...) // never reached
			c := &boundConn{Conn: &chunkConn{r: bytes.NewReader(stream), size: 7}, max: bound,
				failed: func(err error) { failed = append(failed, err) }}
			got, err := readFrames(c)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, [][]byte{handshakeFrame()}, got)
			require.Len(t, failed, 1)
			require.ErrorIs(t, failed[0], tc.want)
			require.NotErrorIs(t, err, ErrUnreachable)
			_, again := c.Read(make([]byte, 16))
			require.ErrorIs(t, again, tc.want, "every later read fails")
		})
	}
}
