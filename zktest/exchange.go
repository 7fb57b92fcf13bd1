package zktest

import (
	"slices"

	"github.com/zklock/zklock/internal/wire"
)

// Exchange is one request or reply the proxy forwarded.
type Exchange struct {
	Conn  int   // the client connection, numbered from 1 in the order the proxy accepted them
	Xid   int32 // the request's xid, which its reply carries too
	Op    int32 // the request's opcode (see Requests); for a reply, that of the request it answers
	Reply bool  // a reply, forwarded to the client; else a request, forwarded to the server
	Err   int32 // a reply's ZooKeeper error code (0: ok, -101: NoNode, ...)
	// Path is a request's node path, for the requests whose body starts
	// with one: the creates (a sequential create's name before the
	// server appends its number), exists, getData, getChildren and
	// getChildren2. It is empty for other requests and for replies.
	Path string
}

// maxExchanges bounds the log Exchanges returns; later frames are counted
// in Requests but not logged.
const maxExchanges = 100_000

// Exchanges returns the requests and replies forwarded since the proxy
// started or since ResetCounts, in the order the proxy forwarded them (a
// request when it passes it to the server, a reply when it passes it to
// the client: with SetDelay, after the delay), at most the first 100,000.
// Handshakes, pings and watch notifications are left out. With a delay
// toward the client, the order shows what a client sent before it could
// have read a reply: a request logged before the reply it follows was
// sent without waiting for it.
func (p *Proxy) Exchanges() []Exchange {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.log)
}

// logRequest logs a request of l: its header and its path (nil for the
// requests that carry none, see Exchange.Path).
func (p *Proxy) logRequest(l *link, h wire.RequestHeader, path []byte) {
	if h.Xid < 0 { // pings, auth, set-watches
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if l.ops == nil {
		l.ops = map[int32]int32{}
	}
	l.ops[h.Xid] = h.Type
	if len(p.log) < maxExchanges {
		p.log = append(p.log, Exchange{Conn: l.id, Xid: h.Xid, Op: h.Type, Path: string(path)})
	}
}

// logReply logs a reply frame of l.
func (p *Proxy) logReply(l *link, f []byte) {
	h, err := wire.ParseReplyHeader(f)
	if err != nil || h.Xid < 0 { // notifications, pings
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	op := l.ops[h.Xid]
	delete(l.ops, h.Xid)
	if len(p.log) < maxExchanges {
		p.log = append(p.log, Exchange{Conn: l.id, Xid: h.Xid, Op: op, Reply: true, Err: h.Err})
	}
}
