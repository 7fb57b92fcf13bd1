package zklock

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// checkServer checks one server address as Connect takes it: "host:port"
// with a port from 1 to 65535 (an IPv6 address in brackets), or a host
// alone, to which go-zookeeper adds its default port 2181.
func checkServer(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty server address", ErrInvalidArgument)
	}
	if !strings.Contains(s, ":") {
		return nil
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%w: server %q: want host:port", ErrInvalidArgument, s)
	}
	if host == "" {
		return fmt.Errorf("%w: server %q: no host", ErrInvalidArgument, s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: server %q: port %q is not a number from 1 to 65535", ErrInvalidArgument, s, port)
	}
	return nil
}

// hostList is the session's zk.HostProvider. Unlike go-zookeeper's default,
// which resolves every name once at Connect, it keeps the servers as given,
// for the dialer to resolve and TLS to check against; its order and round
// robin are the default's (docs/protocol.md#connecting-servers-and-tls).
//
// For paceFor after an outage's first failed pass, Next reports no pass and
// pauses the pace's jittered backoff instead; after that it reports every
// pass, as the default does (docs/internals.md#pacing-an-outage). The zero
// value paces nothing.
type hostList struct {
	mu      sync.Mutex
	servers []string
	cur     int // index of the server last returned by Next; -1 before the first
	good    int // index of the server last connected to (or first tried); -1 before

	pace    Backoff       // the pauses between passes while pacing
	paceFor time.Duration // how long after the first failed pass to pace
	quit    <-chan struct{}
	failed  time.Time // when the first pass since the last connection failed
	passes  int       // passes failed since then
}

// The session's reconnect pacing: pauses of 12-25 ms, doubling up to
// 50-100 ms, for the first second of an outage (docs/internals.md#pacing-an-outage).
const (
	paceBase = 25 * time.Millisecond
	paceMax  = 100 * time.Millisecond
	paceFor  = time.Second
)

// newHostList returns the pacing host list of a session closed by quit.
func newHostList(quit <-chan struct{}) *hostList {
	return &hostList{pace: Backoff{Base: paceBase, Max: paceMax}, paceFor: paceFor, quit: quit}
}

// Init takes the servers, as go-zookeeper formatted them (host:port).
func (h *hostList) Init(servers []string) error {
	if len(servers) == 0 {
		return fmt.Errorf("%w: no servers", ErrInvalidArgument)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.servers = append([]string(nil), servers...)
	h.cur, h.good = -1, -1
	return nil
}

// Len returns the number of servers.
func (h *hostList) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

// Next returns the next server to try, and whether to report that every
// server has been tried since the last that connected. While pacing, it
// pauses before a server that starts a new pass instead of reporting it.
func (h *hostList) Next() (string, bool) {
	h.mu.Lock()
	h.cur = (h.cur + 1) % len(h.servers)
	wrapped := h.cur == h.good
	if h.good < 0 {
		h.good = 0
	}
	srv := h.servers[h.cur]
	if !wrapped {
		h.mu.Unlock()
		return srv, false
	}
	now := time.Now()
	if h.passes == 0 {
		h.failed = now
	}
	pass := h.passes
	h.passes++
	report := now.Sub(h.failed) >= h.paceFor
	h.mu.Unlock()
	if report {
		return srv, true
	}
	h.pause(pass)
	return srv, false
}

// pause sleeps before pass number pass+1 for between half and all of the
// pace's ceiling for it, or until the session is closed.
func (h *hostList) pause(pass int) {
	ceil := h.pace.Ceiling(pass)
	t := time.NewTimer(ceil/2 + rand.N(ceil/2+1))
	defer t.Stop()
	select {
	case <-t.C:
	case <-h.quit:
	}
}

// Connected records that the server last returned by Next connected.
func (h *hostList) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.good = h.cur
	h.passes = 0
}
