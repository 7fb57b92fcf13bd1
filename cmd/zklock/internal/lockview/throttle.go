package lockview

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// throttle slows wrong tokens per client address: each address has a
// bucket of burst tries that refills at one per every; a try with the
// bucket empty is refused unchecked. At most max addresses are kept;
// past that, full buckets are dropped, and if none is, new addresses
// share one bucket, so that memory stays bounded however many addresses
// try.
type throttle struct {
	burst float64
	every time.Duration
	max   int

	mu      sync.Mutex
	buckets map[string]*bucket
	shared  bucket
}

type bucket struct {
	tries float64
	at    time.Time
}

func newThrottle(burst int, every time.Duration, max int) *throttle {
	t := &throttle{burst: float64(burst), every: every, max: max, buckets: map[string]*bucket{}}
	t.shared = bucket{tries: t.burst}
	return t
}

// refill brings b's tries up to now.
func (t *throttle) refill(b *bucket, now time.Time) {
	if !b.at.IsZero() {
		b.tries = min(t.burst, b.tries+float64(now.Sub(b.at))/float64(t.every))
	}
	b.at = now
}

// bucket returns addr's bucket (nil if it has none and may not get one).
func (t *throttle) bucket(addr string, create bool, now time.Time) *bucket {
	if b, ok := t.buckets[addr]; ok {
		return b
	}
	if !create {
		return nil
	}
	if len(t.buckets) >= t.max {
		for k, b := range t.buckets {
			if t.refill(b, now); b.tries >= t.burst {
				delete(t.buckets, k)
			}
		}
		if len(t.buckets) >= t.max {
			return &t.shared
		}
	}
	b := &bucket{tries: t.burst, at: now}
	t.buckets[addr] = b
	return b
}

// wait returns how long addr must wait before its next try: 0 if it may
// try now.
func (t *throttle) wait(addr string) time.Duration {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bucket(addr, false, now)
	if b == nil && len(t.buckets) >= t.max {
		b = &t.shared
	}
	if b == nil {
		return 0
	}
	if t.refill(b, now); b.tries >= 1 {
		return 0
	}
	return time.Duration((1 - b.tries) * float64(t.every))
}

// fail counts a wrong token from addr and reports whether its bucket is
// now empty (the next try will wait).
func (t *throttle) fail(addr string) bool {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.bucket(addr, true, now)
	t.refill(b, now)
	b.tries = max(0, b.tries-1)
	return b.tries < 1
}

// ClientAddr is the address a connection or request comes from, as
// throttled and counted (remote is host:port, or a bare IP): its IP,
// or for IPv6 its /64 (what one client is commonly given).
func ClientAddr(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if ip = ip.Unmap(); ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
