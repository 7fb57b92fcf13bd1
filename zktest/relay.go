package zktest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// quorumRelays stand between the members of an ensemble started
// WithQuorumRelay: member i reaches member j's quorum port (where a leader
// accepts its followers) through a listener of its own, at view[i][j], so
// that what a leader sends to i can be held back (see Cluster.SetLag).
// Election traffic goes direct.
type quorumRelays struct {
	view      [][]ports      // view[i]: the ports member i's config names
	lag       []atomic.Int64 // per follower: nanoseconds
	events    []atomic.Int64 // per follower: its streams' syncs, ends and snapshots
	unheld    []atomic.Bool  // per follower: its latest stream carried a snapshot
	listeners []net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// QuorumPacket types (org.apache.zookeeper.server.quorum.Leader) that the
// relay tells apart.
const (
	qpPing       = 5
	qpRevalidate = 6
	qpUpToDate   = 12
	qpSnap       = 15
)

// Bounds on a QuorumPacket's fields: a proposal carries at most one
// jute.maxbuffer request (1 MiB by default), NEWLEADER the configuration.
const (
	maxQuorumData = 64 << 20
	maxAuthInfo   = 1 << 10
	maxAuthField  = 64 << 10
)

// startRelays listens for every ordered pair of members of all.
func startRelays(all []ports) (*quorumRelays, error) {
	n := len(all)
	r := &quorumRelays{
		view:   make([][]ports, n),
		lag:    make([]atomic.Int64, n),
		events: make([]atomic.Int64, n),
		unheld: make([]atomic.Bool, n),
		conns:  map[net.Conn]struct{}{},
	}
	for i := range all {
		r.view[i] = append([]ports(nil), all...)
		for j := range all {
			if i == j {
				continue
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				r.close()
				return nil, fmt.Errorf("zktest: quorum relay listen: %w", err)
			}
			r.listeners = append(r.listeners, l)
			r.view[i][j].quorum = l.Addr().(*net.TCPAddr).Port
			r.wg.Add(1)
			go r.accept(l, i, fmt.Sprintf("127.0.0.1:%d", all[j].quorum))
		}
	}
	return r, nil
}

// close stops the listeners and every relayed connection, and waits for
// the relay's goroutines.
func (r *quorumRelays) close() {
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	for _, l := range r.listeners {
		l.Close()
	}
	r.wg.Wait()
}

// track registers c for close; false once the relay is closed (c is then
// closed).
func (r *quorumRelays) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		c.Close()
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *quorumRelays) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

// accept relays member follower's connections to the quorum port at
// target.
func (r *quorumRelays) accept(l net.Listener, follower int, target string) {
	defer r.wg.Done()
	for {
		f, err := l.Accept()
		if err != nil {
			return // closed
		}
		if !r.track(f) {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(f)
			ld, err := net.DialTimeout("tcp", target, 5*time.Second)
			if err != nil || !r.track(ld) {
				return
			}
			defer r.untrack(ld)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = io.Copy(ld, f) // the follower's side: never held
				ld.Close()
			}()
			r.fromLeader(ld, f, follower)
			f.Close()
			ld.Close()
			<-done
		}()
	}
}

// heldPacket is a piece of the leader's stream and when it is due.
type heldPacket struct {
	b    []byte
	due  time.Time // zero: at once, in order
	jump bool      // forwarded at once, ahead of what is held
}

// fromLeader forwards the leader's stream from ld to the follower at f,
// one QuorumPacket at a time. Once the follower is in sync (UPTODATE has
// passed), every packet but pings and session revalidations is held for
// the follower's lag from the moment it was read, in order; those two
// pass at once. A stream that does not parse, or that carries a snapshot
// (SNAP is followed by the serialized tree, which is no QuorumPacket), is
// copied unheld from there on. Each sync, each unheld stream and the
// stream's end count in r.events[follower].
func (r *quorumRelays) fromLeader(ld, f net.Conn, follower int) {
	defer r.events[follower].Add(1) // the end, once what was read is written
	out := make(chan heldPacket, 64)
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		forward(out, f)
	}()
	defer func() {
		close(out)
		<-wrote
	}()
	br := bufio.NewReaderSize(ld, 64<<10)
	inSync := false
	for {
		typ, b, err := readQuorumPacket(br)
		if err != nil {
			if len(b) > 0 && errors.Is(err, errNotQuorum) {
				r.goUnheld(follower)
				out <- heldPacket{b: b}
				rawCopy(br, out)
			}
			return
		}
		p := heldPacket{b: b}
		switch d := time.Duration(r.lag[follower].Load()); {
		case !inSync:
		case typ == qpPing || typ == qpRevalidate:
			p.jump = true
		case d > 0:
			p.due = time.Now().Add(d)
		}
		out <- p
		switch typ {
		case qpUpToDate:
			inSync = true
			r.unheld[follower].Store(false)
			r.events[follower].Add(1)
		case qpSnap:
			r.goUnheld(follower)
			rawCopy(br, out)
			return
		}
	}
}

// goUnheld records that follower's stream is copied unheld from now on.
func (r *quorumRelays) goUnheld(follower int) {
	r.unheld[follower].Store(true)
	r.events[follower].Add(1)
}

// rawCopy forwards the rest of br unparsed, in order behind what is held.
func rawCopy(br *bufio.Reader, out chan<- heldPacket) {
	for {
		b := make([]byte, 32<<10)
		n, err := br.Read(b)
		if n > 0 {
			out <- heldPacket{b: b[:n]}
		}
		if err != nil {
			return
		}
	}
}

// forward writes what in delivers to f: jumps at once, the rest in order,
// each once due. It returns when in is closed and drained or f fails.
func forward(in <-chan heldPacket, f net.Conn) {
	var held []heldPacket
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	open := true
	for open || len(held) > 0 {
		for len(held) > 0 && !time.Now().Before(held[0].due) {
			if _, err := f.Write(held[0].b); err != nil {
				drain(in, f)
				return
			}
			held = held[1:]
		}
		var due <-chan time.Time
		if len(held) > 0 {
			timer.Reset(time.Until(held[0].due))
			due = timer.C
		} else if !open {
			return
		}
		select {
		case p, ok := <-in:
			switch {
			case !ok:
				open, in = false, nil
			case p.jump:
				if _, err := f.Write(p.b); err != nil {
					drain(in, f)
					return
				}
			default:
				held = append(held, p)
			}
		case <-due:
		}
	}
}

// drain closes f, whose write failed, and discards the rest of in, so
// that the reader never blocks; the reader ends once the leader's side is
// closed too.
func drain(in <-chan heldPacket, f net.Conn) {
	f.Close()
	if in == nil { // already closed and drained
		return
	}
	for range in { //nolint:revive // discard
	}
}

var errNotQuorum = errors.New("zktest: not a QuorumPacket")

// readQuorumPacket reads one jute-serialized QuorumPacket (int type, long
// zxid, buffer data, vector of Id authinfo) from br and returns its type
// and bytes. On errNotQuorum the bytes read so far are returned too.
func readQuorumPacket(br *bufio.Reader) (int32, []byte, error) {
	var b []byte
	read := func(n int) ([]byte, error) {
		start := len(b)
		b = append(b, make([]byte, n)...)
		_, err := io.ReadFull(br, b[start:])
		return b[start:], err
	}
	length := func(limit int32) (int32, error) {
		f, err := read(4)
		if err != nil {
			return 0, err
		}
		n := int32(binary.BigEndian.Uint32(f))
		if n < -1 || n > limit {
			return 0, errNotQuorum
		}
		return n, nil
	}
	head, err := read(12)
	if err != nil {
		return 0, b, err
	}
	typ := int32(binary.BigEndian.Uint32(head))
	if typ <= 0 || typ > 64 {
		return 0, b, errNotQuorum
	}
	n, err := length(maxQuorumData)
	if err == nil && n > 0 {
		_, err = read(int(n))
	}
	if err != nil {
		return 0, b, err
	}
	ids, err := length(maxAuthInfo)
	for k := int32(0); err == nil && k < ids*2; k++ { // scheme, id
		if n, err = length(maxAuthField); err == nil && n > 0 {
			_, err = read(int(n))
		}
	}
	return typ, b, err
}
