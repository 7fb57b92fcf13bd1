package bench

import (
	"net"
	"sync"

	"github.com/zklock/zklock/internal/wire"
)

// relay is a counting TCP relay in front of one ZooKeeper server: it
// forwards frames unchanged and counts the client requests by opcode (pings
// excluded) and the watch notifications the server delivers. The herd
// measurement connects every client of one run through it, whatever its
// language, so the counts are comparable.
type relay struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	reqs   map[int32]int
	notifs int
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newRelay(target string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, target: target, reqs: map[int32]int{}, conns: map[net.Conn]struct{}{}}
	r.wg.Go(r.accept)
	return r, nil
}

// Addr is the host:port clients connect to.
func (r *relay) Addr() string { return r.ln.Addr().String() }

// Reset zeroes the counts.
func (r *relay) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs, r.notifs = map[int32]int{}, 0
}

// Counts returns the requests by opcode and the notifications since Reset.
func (r *relay) Counts() (reqs map[int32]int, total, notifs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reqs = make(map[int32]int, len(r.reqs))
	for op, n := range r.reqs {
		reqs[op] = n
		total += n
	}
	return reqs, total, r.notifs
}

// Close stops accepting, cuts every connection and waits for the relay's
// goroutines.
func (r *relay) Close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		_ = c.Close()
	}
	r.mu.Unlock()
	_ = r.ln.Close()
	r.wg.Wait()
}

func (r *relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *relay) accept() {
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", r.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		if !r.track(client) || !r.track(server) {
			_ = client.Close()
			_ = server.Close()
			return
		}
		r.wg.Go(func() { r.pipe(client, server, true) })
		r.wg.Go(func() { r.pipe(server, client, false) })
	}
}

// pipe copies frames from src to dst, counting them, and closes both ends
// when either side ends.
func (r *relay) pipe(src, dst net.Conn, toServer bool) {
	defer func() {
		_ = src.Close()
		_ = dst.Close()
	}()
	for first := true; ; first = false {
		f, err := wire.ReadFrame(src, wire.DefaultMaxFrame)
		if err != nil {
			return // EOF or a cut connection: the client is done or reconnects
		}
		if !first {
			r.count(f, toServer)
		}
		if err := wire.WriteFrame(dst, f); err != nil {
			return
		}
	}
}

func (r *relay) count(f []byte, toServer bool) {
	if toServer {
		h, err := wire.ParseRequestHeader(f)
		if err != nil || h.Type == wire.OpPing || h.Type == wire.OpCloseSession {
			return
		}
		r.mu.Lock()
		r.reqs[h.Type]++
		r.mu.Unlock()
		return
	}
	h, err := wire.ParseReplyHeader(f)
	if err != nil || h.Xid != wire.XidWatchEvent {
		return
	}
	r.mu.Lock()
	r.notifs++
	r.mu.Unlock()
}
