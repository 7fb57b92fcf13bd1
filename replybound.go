package zklock

// Bounding what a server may make the client read: a peer that is not
// ZooKeeper fails the connection attempt; a reply over the session's bound
// fails only its own request. See docs/protocol.md#bounded-replies.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"
	"strings"

	"github.com/zklock/zklock/internal/wire"
)

// DefaultMaxReply is the longest reply a session reads unless
// WithMaxReply says otherwise: far above what ZooKeeper sends with its
// default settings for any request the library makes (a listing of
// 100,000 children with 24-byte names is 2.8 MB), and far below the 4 GiB
// a hostile length prefix could make go-zookeeper allocate.
const DefaultMaxReply = 64 << 20

// Bounds of a plausible ConnectResponse payload: protocolVersion, timeOut,
// sessionId, then the password (16 bytes from every ZooKeeper release) and,
// from 3.4 on, the readOnly flag.
const (
	minConnectResponse = wire.ConnectResponseHeadLen + 4
	maxConnectResponse = 1 << 10
)

// frameHead is what boundConn reads of each frame before passing any of
// it on: the length prefix and a ReplyHeader (or the ConnectResponse's
// fixed fields, for the handshake frame).
const frameHead = 4 + wire.ReplyHeaderLen

// boundConn is a new connection to a server, under the tap, on the
// plaintext side of TLS. Its reads fail once the stream is not one a
// ZooKeeper server sends (the first frame must be a plausible
// ConnectResponse; no later frame may be shorter than a ReplyHeader), and
// it replaces each reply longer than max by a reply of the same xid with
// the error tooLongCode(its length), skipping the body.
type boundConn struct {
	net.Conn
	max    int
	failed func(error) // records a violation after the handshake (connFailures.protocol)

	// The stream, by the reading goroutine.
	frames int64           // frames whose head was read
	head   [frameHead]byte // the current frame's head, as read
	have   int             // bytes of head read
	pass   int             // body bytes to pass on unread
	skip   int             // body bytes to discard
	out    []byte          // head bytes to hand on, before reading more
	first  []byte          // the stream's first bytes (up to 8), to show what answered
	later  error           // a read error held back while out is handed on
	err    error           // the first violation; every later read fails with it
}

func (c *boundConn) Read(p []byte) (int, error) {
	for {
		switch {
		case len(c.out) > 0:
			n := copy(p, c.out)
			c.out = c.out[n:]
			return n, nil
		case c.err != nil:
			return 0, c.err
		case c.later != nil:
			err := c.later
			c.later = nil
			return 0, err
		case c.pass > 0:
			n, err := c.Conn.Read(p[:min(len(p), c.pass)])
			c.pass -= n
			return n, err
		}
		if c.skip > 0 {
			n, err := io.CopyN(io.Discard, c.Conn, int64(c.skip))
			c.skip -= int(n)
			if err != nil {
				return 0, err
			}
			continue
		}
		n, err := c.Conn.Read(c.head[c.have:])
		c.read(n)
		if err != nil {
			if len(c.out) == 0 && c.err == nil {
				return 0, err
			}
			c.later = err
		}
	}
}

// read takes n more bytes of the current frame's head: once the length
// prefix is in, it judges the length; once the whole head is, it decides
// what to hand on.
func (c *boundConn) read(n int) {
	if len(c.first) < 8 {
		c.first = append(c.first, c.head[c.have:c.have+min(n, 8-len(c.first))]...)
	}
	before := c.have
	c.have += n
	length := int64(int32(binary.BigEndian.Uint32(c.head[:4])))
	if before < 4 && c.have >= 4 {
		c.err = c.judge(length)
	}
	if c.err != nil || c.have < frameHead {
		return
	}
	c.have = 0
	c.frames++
	body := int(length) - wire.ReplyHeaderLen
	if c.frames == 1 {
		if err := checkConnectHead(c.head[4:]); err != nil {
			c.err = notZooKeeper(fmt.Errorf("its first bytes are %q: %w", c.first, err))
			return
		}
		c.out, c.pass = c.head[:], body
		return
	}
	switch h, _ := wire.ParseReplyHeader(c.head[4:]); {
	case length <= int64(c.max):
		c.out, c.pass = c.head[:], body
	case h.Xid < 0: // a notification, or a reply to no request: nothing to fail in its place
		c.err = c.violation(fmt.Errorf("%w (%d bytes, over the session's bound of %d, for xid %d)", ErrReplyTooLong, length, c.max, h.Xid))
	default:
		binary.BigEndian.PutUint32(c.head[:4], wire.ReplyHeaderLen)
		binary.BigEndian.PutUint32(c.head[16:], uint32(tooLongCode(length)))
		c.out, c.skip = c.head[:], body
	}
}

// judge checks the length prefix of the current frame, as soon as it is in.
func (c *boundConn) judge(length int64) error {
	if c.frames == 0 {
		if length < minConnectResponse || length > maxConnectResponse {
			return notZooKeeper(fmt.Errorf("its first bytes are %q: a first reply of %d bytes, where a ZooKeeper connect response has %d to %d",
				c.first, length, minConnectResponse, maxConnectResponse))
		}
		return nil
	}
	if length < wire.ReplyHeaderLen {
		return c.violation(fmt.Errorf("%w: a frame of %d bytes, shorter than a reply header", ErrProtocol, length))
	}
	return nil
}

// violation records err as the reason the connection ends and returns it.
func (c *boundConn) violation(err error) error {
	if c.failed != nil {
		c.failed(err)
	}
	return err
}

// checkConnectHead checks the fixed fields of a handshake frame.
func checkConnectHead(head []byte) error {
	switch {
	case binary.BigEndian.Uint32(head) != 0:
		return fmt.Errorf("protocol version %d in the connect response, where ZooKeeper sends 0",
			int32(binary.BigEndian.Uint32(head)))
	case int32(binary.BigEndian.Uint32(head[4:])) < 0:
		return fmt.Errorf("a negative session timeout (%d ms) in the connect response",
			int32(binary.BigEndian.Uint32(head[4:])))
	}
	return nil
}

// notZooKeeper wraps the reason a peer's reply is not ZooKeeper's.
func notZooKeeper(err error) error {
	return fmt.Errorf("%w: %w", ErrNotZooKeeper, err)
}

// The error code of a reply put in place of one too long carries the
// length it announced: math.MinInt32 plus the length, far below every
// code ZooKeeper defines (-1 to -200), so that the request's error says
// how long the reply was. go-zookeeper reports an unknown code as
// "unknown error: <code>".
const (
	tooLongBase     = math.MinInt32
	tooLongCeiling  = -1 << 16 // codes above it are ZooKeeper's
	unknownCodeText = "unknown error: "
)

// tooLongCode is the error code that stands for a reply of length bytes.
func tooLongCode(length int64) int32 {
	return int32(min(tooLongBase+length, tooLongCeiling))
}

// replyTooLong reports the length carried by err if it is the error of a
// request whose reply was over the bound (see tooLongCode).
func replyTooLong(err error) (length int64, ok bool) {
	if err == nil {
		return 0, false
	}
	msg := err.Error()
	i := strings.LastIndex(msg, unknownCodeText)
	if i < 0 {
		return 0, false
	}
	digits := msg[i+len(unknownCodeText):]
	if j := strings.IndexFunc(digits, func(r rune) bool { return r != '-' && (r < '0' || r > '9') }); j >= 0 {
		digits = digits[:j]
	}
	code, perr := strconv.ParseInt(digits, 10, 32)
	if perr != nil || code > tooLongCeiling {
		return 0, false
	}
	return code - tooLongBase, true
}

// tooLongError is the error of a request on node whose reply was over
// the bound: it wraps ErrReplyTooLong and says how long the reply was.
func tooLongError(err error, a access, node string) error {
	length, _ := replyTooLong(err)
	return fmt.Errorf("%w: %s %s: the server's reply is %d bytes, over the session's bound (see WithMaxReply)",
		ErrReplyTooLong, a.op, node, length)
}

// errIsProtocol reports whether err ended a connection after its
// handshake because of what the server sent (see boundConn).
func errIsProtocol(err error) bool {
	return errors.Is(err, ErrProtocol) || errors.Is(err, ErrReplyTooLong)
}
