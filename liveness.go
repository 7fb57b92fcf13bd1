package zklock

import (
	"encoding/binary"
	"net"
	"time"
)

// dial is the dialer the session gives go-zookeeper: the configured dialer,
// wrapped so the session knows when a server was last heard from and what
// session timeout and id the server granted.
func (s *Session) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := s.cfg.dialer(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	s.heard.Store(int64(time.Since(s.epoch)))
	return &heardConn{Conn: c, s: s}, nil
}

// heardConn records every arrival of bytes and parses the first frame the
// server sends, the ConnectResponse: length(4) protocolVersion(4)
// timeOut(4) sessionId(8) passwd...
type heardConn struct {
	net.Conn
	s    *Session
	head []byte // the first bytes of the stream, until the session id is known
	done bool
}

const connectHeadLen = 4 + 4 + 4 + 8

func (c *heardConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.s.heard.Store(int64(time.Since(c.s.epoch)))
		if !c.done {
			c.sniff(p[:n])
		}
	}
	return n, err
}

func (c *heardConn) sniff(b []byte) {
	need := connectHeadLen - len(c.head)
	c.head = append(c.head, b[:min(need, len(b))]...)
	if len(c.head) < connectHeadLen {
		return
	}
	c.done = true
	timeoutMs := int32(binary.BigEndian.Uint32(c.head[8:12]))
	sid := int64(binary.BigEndian.Uint64(c.head[12:20]))
	if timeoutMs > 0 {
		c.s.negotiated.Store(int64(time.Duration(timeoutMs) * time.Millisecond))
	}
	c.s.dialSid.Store(sid)
	c.head = nil
}
