package zklock

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
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
type hostList struct {
	mu      sync.Mutex
	servers []string
	cur     int // index of the server last returned by Next; -1 before the first
	good    int // index of the server last connected to (or first tried); -1 before
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

// Next returns the next server to try, and whether every server has been
// tried since the last that connected (go-zookeeper then pauses a second).
func (h *hostList) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cur = (h.cur + 1) % len(h.servers)
	wrapped := h.cur == h.good
	if h.good < 0 {
		h.good = 0
	}
	return h.servers[h.cur], wrapped
}

// Connected records that the server last returned by Next connected.
func (h *hostList) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.good = h.cur
}
