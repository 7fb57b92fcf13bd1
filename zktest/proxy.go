package zktest

import (
	"fmt"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Proxy is a TCP proxy in front of a Cluster: one listener on 127.0.0.1 per
// member, each forwarding whole protocol frames to that member. It injects
// client-side network faults (partition, connection loss, lost reply) and
// counts requests, for any client: Go clients connect through Dialer, Java
// or Python clients through ConnectString. It understands only the client
// protocol: four-letter words sent through it are dropped. All methods are
// safe for concurrent use.
type Proxy struct {
	c         *Cluster
	listeners []net.Listener
	addrMap   map[string]string // member (or listener) address -> listener

	mu       sync.Mutex
	links    map[*link]struct{}
	gate     chan struct{}         // closed while forwarding is allowed
	cutoff   map[int]chan struct{} // isolated members: closed by Heal
	refused  map[int]bool          // members new connections to are refused (Refuse)
	counts   map[int32]int
	log      []Exchange // see Exchanges
	accepted int        // connections accepted, for Exchange.Conn

	dropCreate atomic.Bool
	dropThen   atomic.Pointer[func(int)] // DropNextCreateReplyThen's f
	delay      [2]atomic.Int64           // nanoseconds: [0] to the server, [1] to the client
	held       atomic.Int64              // frames read and not yet forwarded or dropped
	closed     chan struct{}
	closeOnce  sync.Once
	wg         sync.WaitGroup
}

// Proxy starts a proxy in front of every member and closes it in the
// test's cleanup. It fails the test (t.Fatal) if it cannot listen.
func (c *Cluster) Proxy(t testing.TB) *Proxy {
	t.Helper()
	if c.tls != nil {
		t.Fatalf("zktest: a Proxy cannot be used with a cluster started WithTLS (it reads the protocol's frames)")
	}
	p := &Proxy{
		c:       c,
		addrMap: map[string]string{},
		links:   map[*link]struct{}{},
		gate:    make(chan struct{}),
		counts:  map[int32]int{},
		cutoff:  map[int]chan struct{}{},
		refused: map[int]bool{},
		closed:  make(chan struct{}),
	}
	close(p.gate)
	t.Cleanup(p.Close)
	for i, addr := range c.servers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("zktest: proxy listen: %v", err)
		}
		p.listeners = append(p.listeners, l)
		la := l.Addr().String()
		p.addrMap[la] = la
		for _, a := range addrForms(addr) {
			p.addrMap[a] = la
		}
		p.wg.Add(1)
		go p.acceptLoop(l, i)
	}
	return p
}

// addrForms returns addr and the forms go-zookeeper may dial for it (it
// resolves host names to IP addresses before dialing).
func addrForms(addr string) []string {
	out := []string{addr}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return out
	}
	ips, _ := net.LookupHost(host)
	for _, ip := range ips {
		out = append(out, net.JoinHostPort(ip, port))
	}
	return out
}

// Dialer returns a dialer for zk.WithDialer that sends each connection for
// a member's address (as in Cluster.Servers) to that member's listener.
// Dialing any other address fails, so no connection bypasses the proxy.
// Sessions made through the proxy are recorded for Cluster.Expire.
func (p *Proxy) Dialer() zk.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		target, ok := p.addrMap[address]
		if !ok {
			return nil, fmt.Errorf("zktest: proxy dialer: %s is not a cluster member (members: %s)", address, p.c.ConnectString())
		}
		return net.DialTimeout(network, target, timeout)
	}
}

// Connect is Cluster.Connect through the proxy (zk.WithDialer(p.Dialer())).
func (p *Proxy) Connect(t testing.TB, sessionTimeout time.Duration, opts ...ConnOption) *zk.Conn {
	t.Helper()
	return connect(t, p.c.servers, sessionTimeout, p.Dialer(), opts)
}

// Addrs returns the listeners' addresses, in member order.
func (p *Proxy) Addrs() []string {
	out := make([]string, len(p.listeners))
	for i, l := range p.listeners {
		out[i] = l.Addr().String()
	}
	return out
}

// ConnectString returns the listeners' addresses, comma-separated, for
// clients that are not Go (Curator, kazoo) to connect through the proxy.
func (p *Proxy) ConnectString() string { return strings.Join(p.Addrs(), ",") }

// Blackhole stops forwarding in both directions on every open connection:
// bytes already sent stay queued in the proxy (as in a network partition,
// neither side sees a close), and new connections are accepted but never
// answered. Heal delivers everything that was queued, in order.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default: // already blackholed
	}
}

// Isolate cuts this proxy's clients off from some members only (as in a
// partition that leaves the client with the other members), while the
// members keep serving everyone else: open connections to them are
// blackholed (see Blackhole), and new ones are closed at once, as a
// refused connection would be, so that a client moves on to another
// member without waiting for its handshake timeout. Out-of-range indexes
// are ignored. Heal ends it.
func (p *Proxy) Isolate(members ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range members {
		if m >= 0 && m < len(p.listeners) && p.cutoff[m] == nil {
			p.cutoff[m] = make(chan struct{})
		}
	}
}

// Refuse closes new connections to some members at once, as a refused
// connection would be, so that a client that connects or reconnects now
// moves on to the other members; unlike Isolate, open connections are left
// alone. With DropNextCreateReply it sends the creating client, once its
// connection is closed, to the members it may still reach (a lagging
// follower, see Cluster.SetLag). Out-of-range indexes are ignored. Heal
// ends it.
func (p *Proxy) Refuse(members ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range members {
		if m >= 0 && m < len(p.listeners) {
			p.refused[m] = true
		}
	}
}

// Accepted returns how many connections the proxy has accepted, those it
// closed at once (Refuse, Isolate) included: with every member refused, the
// connection attempts a client has made.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Heal ends a Blackhole and every Isolate and Refuse.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.refused)
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
	for m, g := range p.cutoff {
		close(g)
		delete(p.cutoff, m)
	}
}

// Cut closes every open connection now (both sides see the close; queued
// bytes are lost). New connections are still accepted.
func (p *Proxy) Cut() {
	p.mu.Lock()
	ls := make([]*link, 0, len(p.links))
	for l := range p.links {
		ls = append(ls, l)
	}
	p.mu.Unlock()
	for _, l := range ls {
		l.close()
	}
}

// SetDelay makes the proxy hold every frame before forwarding it: toServer
// for what clients send (requests, handshakes, pings), toClient for what
// servers send (replies, watch notifications). A frame's delay counts from
// the moment the proxy read it, so frames in flight are delayed together,
// as by a network link's latency (not its bandwidth), and every connection
// keeps its order in both directions, also when the delay changes. The
// delays apply to frames read from then on, on open and new connections;
// a round trip through the proxy takes toServer+toClient longer. Zero (the
// default) forwards at once; negative durations count as zero. Delays add
// to Blackhole: a frame held by a partition is sent once healed and due.
func (p *Proxy) SetDelay(toServer, toClient time.Duration) {
	p.delay[0].Store(int64(max(toServer, 0)))
	p.delay[1].Store(int64(max(toClient, 0)))
}

// DropNextCreateReply arms a one-shot fault: the next create request
// (create, create2, createContainer or createTTL) from any client is
// forwarded and applied by the server, but its reply is dropped and that
// client's connection is closed at once, so the client cannot tell whether
// the node exists (Curator's ChaosMonkeyCnxnFactory case).
func (p *Proxy) DropNextCreateReply() { p.DropNextCreateReplyThen(nil) }

// DropNextCreateReplyThen is DropNextCreateReply, and f (if not nil) runs
// once the proxy has read that create request, before it forwards it, with
// the index of the member the create goes to: for example to make another
// member lag from this create on (Cluster.SetLag), so that it has applied
// everything the client saw before the create, and to Refuse the others.
// f runs on the proxy's forwarding goroutine, so it must return quickly.
func (p *Proxy) DropNextCreateReplyThen(f func(member int)) {
	if f != nil {
		p.dropThen.Store(&f)
	} else {
		p.dropThen.Store(nil)
	}
	p.dropCreate.Store(true)
}

// Requests returns how many requests of each opcode (see
// org.apache.zookeeper.ZooDefs.OpCode: 1 create, 2 delete, 3 exists,
// 4 getData, 8 getChildren, 11 ping, 12 getChildren2, 14 multi, ...) clients
// have sent through the proxy and the proxy has forwarded since it started
// or since ResetCounts. Each connection handshake (ConnectRequest) counts
// as -10, createSession.
func (p *Proxy) Requests() map[int32]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.counts)
}

// ResetCounts sets every count in Requests to zero and empties Exchanges.
func (p *Proxy) ResetCounts() {
	p.mu.Lock()
	clear(p.counts)
	p.log = nil
	p.mu.Unlock()
}

// Close stops the listeners and closes every connection; it waits for the
// proxy's goroutines to end. It is idempotent and runs in cleanup.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		close(p.closed)
		for _, l := range p.listeners {
			l.Close()
		}
		p.Cut()
	})
	p.wg.Wait()
}
