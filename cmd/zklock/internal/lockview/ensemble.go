package lockview

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"slices"
	"sync"
	"time"
)

// How the ensemble is asked: each four-letter word within fourBound, a
// reverse lookup within dnsBound, a cons asked for by a new session at
// most once per consEvery; at most maxNames names are kept, each for
// nameTTL.
const (
	fourBound = 3 * time.Second
	dnsBound  = 300 * time.Millisecond
	consEvery = time.Second
	maxNames  = 4096
	nameTTL   = 10 * time.Minute
)

// allowHint says how to let the view ask the ensemble.
const allowHint = "allow it with 4lw.commands.whitelist=cons,srvr,mntr in each member's zoo.cfg (or -Dzookeeper.4lw.commands.whitelist=cons,srvr,mntr)"

type dnsName struct {
	name string
	at   time.Time
}

// ensemble is what the view knows of the ensemble's members, from their
// four-letter words: their health (srvr) and their clients (cons).
type ensemble struct {
	members []string
	tc      *tls.Config
	every   time.Duration
	kick    chan struct{} // a session without a known client: ask cons again
	polled  chan struct{} // closed after the first poll

	mu      sync.Mutex
	health  []Member
	clients map[int64]Client
	note    string // why client addresses are not shown
	names   map[string]dnsName
}

func newEnsemble(cfg Config) *ensemble {
	e := &ensemble{members: cfg.Members, tc: cfg.TLS, every: cfg.PollEvery, kick: make(chan struct{}, 1),
		polled: make(chan struct{}), clients: map[int64]Client{}, names: map[string]dnsName{}}
	if len(e.members) == 0 {
		close(e.polled)
	}
	return e
}

// client returns the client of session sid, if known; an unknown one asks
// for a new cons.
func (e *ensemble) client(sid int64) *Client {
	e.mu.Lock()
	c, ok := e.clients[sid]
	denied := e.note != ""
	e.mu.Unlock()
	if !ok {
		if !denied && len(e.members) > 0 {
			select {
			case e.kick <- struct{}{}:
			default:
			}
		}
		return nil
	}
	return &c
}

// state returns the members' health and why clients are not shown.
func (e *ensemble) state() ([]Member, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.health), e.note
}

// pollEnsemble asks every member for srvr and cons each PollEvery, and
// for cons again when a session without a known client is shown (at most
// once per consEvery), until the view closes. No ZooKeeper session
// request is sent: each four-letter word is a connection of its own.
func (v *View) pollEnsemble() {
	e := v.ens
	timer := time.NewTimer(0)
	defer timer.Stop()
	var lastCons time.Time
	for {
		full := false
		select {
		case <-v.ctx.Done():
			return
		case <-timer.C:
			full = true
			timer.Reset(e.every)
		case <-e.kick:
			select {
			case <-time.After(time.Until(lastCons.Add(consEvery))):
			case <-v.ctx.Done():
				return
			}
		}
		lastCons = time.Now()
		if v.poll(full) {
			v.mu.Lock()
			v.notifyLocked()
			v.mu.Unlock()
		}
		if full {
			select {
			case <-e.polled:
			default:
				close(e.polled)
			}
		}
	}
}

// poll asks each member for cons (and srvr if full), and reports whether
// what the view shows changed.
func (v *View) poll(full bool) bool {
	e := v.ens
	health := make([]Member, len(e.members))
	if full {
		own := v.s.Conn().Server()
		var wg sync.WaitGroup
		for i, addr := range e.members {
			wg.Go(func() { health[i] = askHealth(v.ctx, addr, own, e.tc) })
		}
		wg.Wait()
	}
	clients, note := askClients(v.ctx, e.members, e.tc)
	v.resolve(clients)
	e.mu.Lock()
	defer e.mu.Unlock()
	changed := note != e.note || len(clients) != len(e.clients)
	for sid, c := range clients {
		if old, ok := e.clients[sid]; !ok || old != c {
			changed = true
		}
	}
	if full {
		changed = changed || !slices.Equal(health, e.health)
		e.health = health
	}
	e.clients, e.note = clients, note
	return changed
}

// askHealth asks the member at addr for srvr; own is the server the
// view's session is connected to.
func askHealth(ctx context.Context, addr, own string, tc *tls.Config) Member {
	ctx, cancel := context.WithTimeout(ctx, fourBound)
	defer cancel()
	m := Member{Addr: addr, Own: sameAddr(ctx, addr, own)}
	out, err := fourLetter(ctx, addr, "srvr", tc)
	if err != nil {
		m.Problem = err.Error()
		m.Up = errors.Is(err, errNotAllowed)
		return m
	}
	m.Up = true
	parseSrvr(out, &m)
	return m
}

// resolve names the clients' addresses: from the cache, or by a reverse
// lookup (lookupNames); the cache keeps at most maxNames, each nameTTL.
func (v *View) resolve(clients map[int64]Client) {
	e := v.ens
	now := time.Now()
	var todo []string
	e.mu.Lock()
	for _, c := range clients {
		ip, _, _ := net.SplitHostPort(c.Addr)
		if n, ok := e.names[ip]; (!ok || now.Sub(n.at) > nameTTL) && !slices.Contains(todo, ip) && len(todo) < maxNames {
			todo = append(todo, ip)
		}
	}
	e.mu.Unlock()
	found := lookupNames(v.ctx, todo)
	e.mu.Lock()
	defer e.mu.Unlock()
	for ip, n := range e.names {
		if now.Sub(n.at) > nameTTL {
			delete(e.names, ip)
		}
	}
	for _, ip := range todo {
		if len(e.names) < maxNames {
			e.names[ip] = dnsName{name: found[ip], at: now}
		}
	}
	for sid, c := range clients {
		ip, _, _ := net.SplitHostPort(c.Addr)
		c.Name = e.names[ip].name
		if c.Name == "" {
			c.Name = found[ip]
		}
		clients[sid] = c
	}
}

// sameAddr reports whether the member at addr is the server at own
// (go-zookeeper's resolved address), both host:port.
func sameAddr(ctx context.Context, addr, own string) bool {
	if addr == own || own == "" {
		return addr == own
	}
	host, port, err := net.SplitHostPort(addr)
	oh, op, err2 := net.SplitHostPort(own)
	if err != nil || err2 != nil || port != op {
		return false
	}
	ips, err := net.DefaultResolver.LookupHost(ctx, host)
	return err == nil && slices.Contains(ips, oh)
}
