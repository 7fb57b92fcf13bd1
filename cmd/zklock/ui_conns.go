package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// tooMany is what a connection past --max-conns gets (plain HTTP; over
// TLS it is closed unanswered).
const tooMany = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n" +
	"Content-Length: 76\r\n\r\n503 too many connections: this server serves at most so many (--max-conns)\r\n"

// capListener accepts at most max connections open at once: one more is
// answered 503 (if answer; after its request's head, read within a
// second) and closed, so that the file descriptors and goroutines stay
// bounded whatever clients do. At most maxRefusing are answered at once;
// past that they are closed unanswered.
type capListener struct {
	net.Listener
	max      int64
	open     atomic.Int64
	answer   bool
	refusing atomic.Int64
}

const maxRefusing = 64

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) <= l.max {
			return &capConn{Conn: c, l: l}, nil
		}
		l.open.Add(-1)
		if !l.answer || l.refusing.Add(1) > maxRefusing {
			if l.answer {
				l.refusing.Add(-1)
			}
			c.Close()
			continue
		}
		go func() {
			defer l.refusing.Add(-1)
			refuse(c)
		}()
	}
}

// refuse reads the head of c's request and answers it with tooMany, all
// within a second, and closes it.
func refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := http.ReadRequest(bufio.NewReader(io.LimitReader(c, 64<<10))); err != nil {
		return
	}
	_, _ = io.WriteString(c, tooMany)
}

// capConn gives its slot back when closed (once).
type capConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *capConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}
