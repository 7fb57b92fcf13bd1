package zktest

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// link is one client connection through the proxy and its upstream.
type link struct {
	client net.Conn
	member int
	id     int             // Exchange.Conn
	ops    map[int32]int32 // xid -> opcode of requests forwarded and not answered; guarded by Proxy.mu
	mu     sync.Mutex
	server net.Conn
	done   chan struct{}
	once   sync.Once

	dropArmed atomic.Bool
	dropXid   atomic.Int32
}

func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		l.mu.Lock()
		if l.server != nil {
			l.server.Close()
		}
		l.mu.Unlock()
	})
}

// setServer attaches the upstream; false if the link closed meanwhile.
func (l *link) setServer(s net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case <-l.done:
		s.Close()
		return false
	default:
		l.server = s
		return true
	}
}

func (p *Proxy) acceptLoop(ln net.Listener, member int) {
	defer p.wg.Done()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return // listener closed
		}
		l := &link{client: conn, member: member, done: make(chan struct{})}
		p.mu.Lock()
		select {
		case <-p.closed:
			p.mu.Unlock()
			conn.Close()
			return
		default:
		}
		p.links[l] = struct{}{}
		p.accepted++
		l.id = p.accepted
		p.wg.Add(1)
		p.mu.Unlock()
		go p.serve(l, member)
	}
}

// waitGate blocks while the proxy is blackholed or the link's member is
// isolated; false if the link or the proxy closed meanwhile.
func (p *Proxy) waitGate(l *link) bool {
	for {
		p.mu.Lock()
		g, cut := p.gate, p.cutoff[l.member]
		p.mu.Unlock()
		if cut == nil {
			if !p.await(l, g) {
				return false
			}
			p.mu.Lock()
			cut = p.cutoff[l.member]
			p.mu.Unlock()
			if cut == nil {
				return true
			}
		}
		if !p.await(l, cut) {
			return false
		}
	}
}

// await waits until ch is closed; false if the link or the proxy closed
// first.
func (p *Proxy) await(l *link, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-l.done:
		return false
	case <-p.closed:
		return false
	}
}

func (p *Proxy) serve(l *link, member int) {
	defer p.wg.Done()
	defer func() {
		l.close()
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
	}()
	p.mu.Lock()
	isolated := p.cutoff[l.member] != nil || p.refused[l.member]
	p.mu.Unlock()
	if isolated { // Isolate, Refuse: a new connection is refused (closed at once)
		return
	}
	if !p.waitGate(l) { // blackholed: accept but never answer
		return
	}
	s, err := net.DialTimeout("tcp", p.c.servers[member], 5*time.Second)
	if err != nil || !l.setServer(s) {
		return
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(l, l.client, s, true) }()
	go func() { defer wg.Done(); p.pipe(l, s, l.client, false) }()
	wg.Wait()
}

// pipe forwards frames from src to dst until either side closes. A reader
// goroutine keeps reading src into a queue, so a blackholed link still
// notices nothing and loses nothing; this goroutine delivers the queue
// whenever the gate is open, inspecting each frame on the way.
func (p *Proxy) pipe(l *link, src, dst net.Conn, toServer bool) {
	delay := &p.delay[1]
	if toServer {
		delay = &p.delay[0]
	}
	frames := make(chan timedFrame, 256)
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		defer close(frames)
		for {
			f, err := wire.ReadFrame(src, wire.DefaultMaxFrame)
			if err != nil {
				return
			}
			tf := timedFrame{f: f}
			if d := time.Duration(delay.Load()); d > 0 {
				tf.due = time.Now().Add(d)
			}
			p.held.Add(1)
			select {
			case frames <- tf:
			case <-l.done:
				p.held.Add(-1)
				return
			}
		}
	}()
	defer func() {
		for range frames { // the reader has ended or is ending
			p.held.Add(-1)
		}
	}()
	defer rwg.Wait()
	defer l.close() // unblocks the reader before rwg.Wait
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	first := true
	for tf := range frames {
		ok := p.waitGate(l) && p.waitDue(l, tf.due, &timer)
		p.held.Add(-1)
		if !ok {
			return
		}
		f := tf.f
		if toServer {
			p.sawRequest(l, f, first)
		} else if p.sawReply(l, f, first) {
			return // dropped reply: close the link now
		} else if !first {
			p.logReply(l, f)
		}
		first = false
		if err := wire.WriteFrame(dst, f); err != nil {
			return
		}
	}
	// src closed: pass the close on only when a partition would let it.
	p.waitGate(l)
}

// shortWait is the longest wait for a frame's due time made with
// shortSleep (precise, not interruptible); longer ones use a timer that
// Close and the link's end interrupt.
const shortWait = 10 * time.Millisecond

// waitDue waits until due (the zero time: not at all); false if the link
// or the proxy closed meanwhile. *timer is reused across calls.
func (p *Proxy) waitDue(l *link, due time.Time, timer **time.Timer) bool {
	wait := time.Until(due)
	if due.IsZero() || wait <= 0 {
		return true
	}
	if wait <= shortWait {
		shortSleep(wait)
		return true
	}
	if *timer == nil {
		*timer = time.NewTimer(wait)
	} else {
		(*timer).Reset(wait)
	}
	select {
	case <-(*timer).C:
		return true
	case <-l.done:
		return false
	case <-p.closed:
		return false
	}
}

// timedFrame is a frame read by pipe and the time it is due to be
// forwarded (zero: at once).
type timedFrame struct {
	f   []byte
	due time.Time
}

// sawRequest counts a client frame and arms the reply drop for a create.
func (p *Proxy) sawRequest(l *link, f []byte, first bool) {
	op := wire.OpCreateSession
	if !first {
		r, err := wire.ParsePathRequest(f)
		if err != nil { // a path the server will reject: count and log the request without it
			if r.RequestHeader, err = wire.ParseRequestHeader(f); err != nil {
				return
			}
		}
		h := r.RequestHeader
		op = h.Type
		if wire.IsCreate(op) && p.dropCreate.CompareAndSwap(true, false) {
			l.dropXid.Store(h.Xid)
			l.dropArmed.Store(true)
			if f := p.dropThen.Swap(nil); f != nil {
				(*f)(l.member)
			}
		}
		p.logRequest(l, h, r.Path)
	}
	p.mu.Lock()
	p.counts[op]++
	p.mu.Unlock()
}

// sawReply records session credentials from the handshake and reports
// whether f is the reply to drop.
func (p *Proxy) sawReply(l *link, f []byte, first bool) bool {
	if first {
		p.c.book.recordPayload(f)
		return false
	}
	if !l.dropArmed.Load() {
		return false
	}
	h, err := wire.ParseReplyHeader(f)
	return err == nil && h.Xid == l.dropXid.Load()
}
