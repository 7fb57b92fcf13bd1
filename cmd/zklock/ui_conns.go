package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

// refusal is what a connection past a cap gets (plain HTTP; over TLS it
// is closed unanswered).
func refusal(why string) string {
	body := "503 too many connections: " + why + "\r\n"
	return "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n" +
		fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
}

var (
	tooMany         = refusal("this server serves at most so many (--max-conns)")
	tooManyFromAddr = refusal("this server serves at most so many to one client address (--max-conns-per-client)")
)

// capListener accepts at most max connections open at once, and at most
// perClient of them from one client address (lockview.ClientAddr: an IP,
// an IPv6 /64), counted before any authentication, so that one client
// cannot take every slot: one more is answered 503 (if answer; after its
// request's head, read within a second) and closed, so that the file
// descriptors and goroutines stay bounded whatever clients do. At most
// maxRefusing are answered at once; past that they are closed
// unanswered.
type capListener struct {
	net.Listener
	max, perClient int64
	answer         bool
	refusing       atomic.Int64

	mu     sync.Mutex
	open   int64
	byAddr map[string]int64 // open connections by client address; none at 0
}

const maxRefusing = 64

// take counts one more connection from addr, if the caps allow: it
// returns "" then, and otherwise the answer to refuse it with.
func (l *capListener) take(addr string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.open >= l.max:
		return tooMany
	case l.byAddr[addr] >= min(l.perClient, l.max):
		return tooManyFromAddr
	}
	if l.byAddr == nil {
		l.byAddr = map[string]int64{}
	}
	l.open++
	l.byAddr[addr]++
	return ""
}

func (l *capListener) give(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := lockview.ClientAddr(c.RemoteAddr().String())
		answer := l.take(addr)
		if answer == "" {
			return &capConn{Conn: c, l: l, addr: addr}, nil
		}
		if !l.answer || l.refusing.Add(1) > maxRefusing {
			if l.answer {
				l.refusing.Add(-1)
			}
			c.Close()
			continue
		}
		go func() {
			defer l.refusing.Add(-1)
			refuse(c, answer)
		}()
	}
}

// refuse reads the head of c's request and answers it, all within a
// second, and closes it.
func refuse(c net.Conn, answer string) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := http.ReadRequest(bufio.NewReader(io.LimitReader(c, 64<<10))); err != nil {
		return
	}
	_, _ = io.WriteString(c, answer)
}

// capConn gives its slot back when closed (once).
type capConn struct {
	net.Conn
	l    *capListener
	addr string
	once sync.Once
}

func (c *capConn) Close() error {
	c.once.Do(func() { c.l.give(c.addr) })
	return c.Conn.Close()
}
