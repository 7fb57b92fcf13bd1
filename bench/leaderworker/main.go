// Command leaderworker is the benchmark's leader process for zklock: the
// failover phase of `make bench` runs zklock's leaders in processes of
// their own, so that it can kill them (kill -9) as it kills Curator's.
//
// It reads one command per line on stdin and writes JSON lines on stdout:
//
//	clock                                   {"ev":"clock","t":NS}
//	join ID RECIPE PATH SERVERS TIMEOUT_MS LOSS
//	leave ID                                end the term (if leading), then leave and close
//	close ID                                close without reporting an end
//	quit
//
// RECIPE is election (zklock.LeaderElection with WithRequeue), latch
// (zklock.LeaderLatch) or floor (go-zookeeper only: an ephemeral
// sequential node; the next in line holds on the watch notification of its
// predecessor's deletion, with no listing: the protocol's least). SERVERS
// is a comma-separated list tried in that order (never shuffled); LOSS is
// the session's loss limit in milliseconds or "default". Events:
// {"ev":"session","id","sid","server","t"} once connected,
// {"ev":"conn","id","state","server","heard","t"} on every state change
// (heard: when bytes last arrived from a server, 0 if never),
// {"ev":"start","id","t"} and {"ev":"end","id","t","why"} for each term,
// {"ev":"left"|"closed","id"}, {"ev":"error","id","msg"}. Every t is
// CLOCK_MONOTONIC in nanoseconds, which all processes of a Linux machine
// share (Java's System.nanoTime reads the same clock).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// out serialises the event lines; emit never blocks the caller for long
// (an observer must not block).
type out struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *out) emit(m map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.enc.Encode(m)
}

var stdout = &out{enc: json.NewEncoder(os.Stdout)}

// event emits ev for participant id at time t (now if 0) with extra fields.
func event(ev, id string, t int64, kv ...any) {
	if t == 0 {
		t = mono()
	}
	m := map[string]any{"ev": ev, "id": id, "t": t}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	stdout.emit(m)
}

// participant is one joined recipe participant with its own session.
type participant interface {
	leave() // report the end of a term, if any, then leave and close
	close() // leave and close without reporting
}

func main() {
	parts := map[string]participant{}
	var wg sync.WaitGroup
	event("ready", "", 0, "pid", os.Getpid())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "clock":
			event("clock", "", 0)
		case "join":
			if len(f) != 7 {
				event("error", "", 0, "msg", "join ID RECIPE PATH SERVERS TIMEOUT_MS LOSS")
				continue
			}
			id := f[1]
			cfg, err := parseJoin(f[2:])
			if err != nil {
				event("error", id, 0, "msg", err.Error())
				continue
			}
			p, err := join(id, cfg)
			if err != nil {
				event("error", id, 0, "msg", err.Error())
				continue
			}
			parts[id] = p
		case "leave", "close":
			if len(f) != 2 || parts[f[1]] == nil {
				event("error", "", 0, "msg", "unknown participant in "+sc.Text())
				continue
			}
			p, id, verb := parts[f[1]], f[1], f[0]
			delete(parts, id)
			wg.Go(func() { // a leave waits for the release; others go on meanwhile
				if verb == "leave" {
					p.leave()
					event("left", id, 0)
				} else {
					p.close()
					event("closed", id, 0)
				}
			})
		case "quit":
			for _, p := range parts {
				wg.Go(p.close)
			}
			wg.Wait()
			return
		default:
			event("error", "", 0, "msg", "unknown command "+f[0])
		}
	}
	for _, p := range parts {
		wg.Go(p.close)
	}
	wg.Wait()
}

// joinConfig is a join command's arguments.
type joinConfig struct {
	recipe, path string
	servers      []string
	timeout      time.Duration
	loss         *time.Duration // nil: the library's default
}

func parseJoin(f []string) (joinConfig, error) {
	c := joinConfig{recipe: f[0], path: f[1], servers: strings.Split(f[2], ",")}
	ms, err := strconv.Atoi(f[3])
	if err != nil || ms <= 0 {
		return c, fmt.Errorf("bad session timeout %q", f[3])
	}
	c.timeout = time.Duration(ms) * time.Millisecond
	if f[4] != "default" {
		l, err := strconv.Atoi(f[4])
		if err != nil {
			return c, fmt.Errorf("bad loss limit %q", f[4])
		}
		d := time.Duration(l) * time.Millisecond
		c.loss = &d
	}
	return c, nil
}

func join(id string, c joinConfig) (participant, error) {
	switch c.recipe {
	case "election":
		return joinElection(id, c)
	case "latch":
		return joinLatch(id, c)
	case "floor":
		return joinFloor(id, c)
	}
	return nil, fmt.Errorf("unknown recipe %q", c.recipe)
}

// ordered is a go-zookeeper host provider that tries the servers in the
// order given to it (go-zookeeper shuffles the list it passes to Init) and
// moves to the next one when a connection ends, as its own provider does:
// the floor's (zklock's sessions use orderedDialer).
type ordered struct {
	mu         sync.Mutex
	servers    []string
	curr, last int
}

func newOrdered(servers []string) *ordered { return &ordered{servers: servers, curr: -1, last: -1} }

func (p *ordered) Init([]string) error { return nil }

func (p *ordered) Len() int { return len(p.servers) }

func (p *ordered) Next() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.curr = (p.curr + 1) % len(p.servers)
	retryStart := p.curr == p.last
	if p.last == -1 {
		p.last = 0
	}
	return p.servers[p.curr], retryStart
}

func (p *ordered) Connected() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = p.curr
}
