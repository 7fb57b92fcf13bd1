package zklock

// Bounding what a server may make the client read: a peer that is not
// ZooKeeper (an HTTP server on the port, a proxy) must fail the connection
// attempt as a configuration error, and no reply may make go-zookeeper
// allocate more than ZooKeeper itself would send.

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/zklock/zklock/internal/wire"
)

// maxReply bounds the payload of every frame a server sends: ZooKeeper's
// jute.maxbuffer default (0xfffff bytes, beyond which its own Java client
// refuses a reply), plus as much again of headroom for servers configured
// above it. go-zookeeper on its own allocates whatever a length prefix
// announces, up to 4 GiB, before reading it.
const maxReply = 0xfffff + 1<<20

// Bounds of a plausible ConnectResponse payload: protocolVersion, timeOut,
// sessionId, then the password (16 bytes from every ZooKeeper release) and,
// from 3.4 on, the readOnly flag.
const (
	minConnectResponse = wire.ConnectResponseHeadLen + 4
	maxConnectResponse = 1 << 10
)

// boundConn is a new connection to a server whose reads fail, passing
// nothing on, once the stream is not one a ZooKeeper server sends: the
// first frame must be a plausible ConnectResponse, and no frame longer
// than maxReply. go-zookeeper then drops the connection and tries the
// next server. It sits under the tap, on the plaintext side of TLS.
type boundConn struct {
	net.Conn
	bound replyBound
}

func (c *boundConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if berr := c.bound.check(p[:n]); berr != nil {
		return 0, berr
	}
	return n, err
}

// replyBound checks a server's byte stream, as it is read. Its zero value
// is ready for a new connection's stream.
type replyBound struct {
	sc    wire.Scanner
	init  bool
	first []byte // the stream's first bytes (up to 8), to show what answered
	err   error  // the first violation; every later read fails with it
}

// check frames p, the next bytes read, and returns an error wrapping
// ErrNotZooKeeper once the stream is not one a ZooKeeper server sends.
func (b *replyBound) check(p []byte) error {
	if !b.init {
		b.init = true
		b.sc = wire.Scanner{Max: maxReply, Head: wire.ConnectResponseHeadLen, Handshake: true}
	}
	if b.err != nil || len(p) == 0 {
		return b.err
	}
	if len(b.first) < 8 {
		b.first = append(b.first, p[:min(len(p), 8-len(b.first))]...)
	}
	if err := b.sc.Feed(p, b.frame); err != nil && b.err == nil {
		b.err = notZooKeeper(fmt.Errorf("its first bytes are %q: %w", b.first, err))
		if b.sc.Frames() > 0 {
			b.err = fmt.Errorf("%w (more than %d bytes): %w", ErrReplyTooLong, maxReply, err)
		}
	}
	return b.err
}

// frame checks the handshake frame's length and fixed fields.
func (b *replyBound) frame(f wire.Frame) {
	if !f.Handshake || b.err != nil {
		return
	}
	switch {
	case f.Len < minConnectResponse || f.Len > maxConnectResponse:
		b.err = notZooKeeper(fmt.Errorf("a first reply of %d bytes, where a ZooKeeper connect response has %d to %d",
			f.Len, minConnectResponse, maxConnectResponse))
	case len(f.Head) < wire.ConnectResponseHeadLen:
	case binary.BigEndian.Uint32(f.Head) != 0:
		b.err = notZooKeeper(fmt.Errorf("protocol version %d in the connect response, where ZooKeeper sends 0",
			int32(binary.BigEndian.Uint32(f.Head))))
	case int32(binary.BigEndian.Uint32(f.Head[4:])) < 0:
		b.err = notZooKeeper(fmt.Errorf("a negative session timeout (%d ms) in the connect response",
			int32(binary.BigEndian.Uint32(f.Head[4:]))))
	}
}

// notZooKeeper wraps the reason a peer's reply is not ZooKeeper's.
func notZooKeeper(err error) error {
	return fmt.Errorf("%w: %w", ErrNotZooKeeper, err)
}
