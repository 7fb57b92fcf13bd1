package lockview

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
)

// Client is where a session connects from, as the member it is connected
// to sees it (its cons answer).
type Client struct {
	Addr   string `json:"addr"`           // ip:port
	Name   string `json:"name,omitempty"` // the ip's reverse DNS name, if it resolved within dnsBound
	Member string `json:"member"`         // the member the session is connected to
}

// askClients asks every member for cons, at once, and returns the client
// of each session they serve, and, if some refuse cons, why clients are
// not shown and how to allow it.
func askClients(ctx context.Context, members []string, tc *tls.Config) (map[int64]Client, string) {
	conns := make([]map[int64]string, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, addr := range members {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, fourBound)
			defer cancel()
			out, err := fourLetter(ctx, addr, "cons", tc)
			conns[i], errs[i] = parseCons(out), err
		})
	}
	wg.Wait()
	clients := map[int64]Client{}
	var denied []string
	for i, m := range conns {
		if errors.Is(errs[i], errNotAllowed) {
			denied = append(denied, members[i])
		}
		for sid, a := range m {
			clients[sid] = Client{Addr: a, Member: members[i]}
		}
	}
	if len(denied) == 0 {
		return clients, ""
	}
	return clients, fmt.Sprintf("ZooKeeper refuses the four-letter word cons (%s): the client address of a session it serves is not shown, "+
		"each participant's data (its id) is. To show them, %s", strings.Join(denied, ", "), allowHint)
}

// Clients asks every member for cons once, and returns the client of each
// session they serve, named by reverse DNS (each lookup within 300ms),
// and, if some refuse cons, why clients are not shown and how to allow
// it. Each member is given 3s.
func Clients(ctx context.Context, members []string, tc *tls.Config) (map[int64]Client, string) {
	clients, note := askClients(ctx, members, tc)
	var ips []string
	for _, c := range clients {
		if ip, _, _ := net.SplitHostPort(c.Addr); !slices.Contains(ips, ip) && len(ips) < maxNames {
			ips = append(ips, ip)
		}
	}
	names := lookupNames(ctx, ips)
	for sid, c := range clients {
		ip, _, _ := net.SplitHostPort(c.Addr)
		c.Name = names[ip]
		clients[sid] = c
	}
	return clients, note
}

// lookupNames looks the ips' names up, each within dnsBound, a few at a
// time; an ip without a name is left out.
func lookupNames(ctx context.Context, ips []string) map[string]string {
	found := make([]string, len(ips))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, ip := range ips {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(ctx, dnsBound)
			defer cancel()
			if names, err := net.DefaultResolver.LookupAddr(ctx, ip); err == nil && len(names) > 0 {
				found[i] = strings.TrimSuffix(names[0], ".")
			}
		})
	}
	wg.Wait()
	out := make(map[string]string, len(ips))
	for i, ip := range ips {
		if found[i] != "" {
			out[ip] = found[i]
		}
	}
	return out
}
