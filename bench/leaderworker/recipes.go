package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// errLeave ends a LeaderElection's Run: a function that returns an error
// while leader stops the requeueing.
var errLeave = errors.New("leave")

// session opens participant id's zklock session, reporting its states.
func session(id string, c joinConfig) (*zklock.Session, error) {
	var s *zklock.Session
	var ready sync.WaitGroup // s is set before the observer reads it
	ready.Add(1)
	d := &orderedDialer{servers: c.servers}
	opts := []zklock.SessionOption{
		zklock.WithSessionTimeout(c.timeout),
		zklock.WithDialer(d.dial),
		zklock.WithZKOptions(zk.WithLogInfo(false)),
		zklock.WithObserver(func(ev zklock.Event) {
			if ev.Kind != zklock.EventState {
				return
			}
			t, heard := mono(), d.heard.Load()
			go func() { // the observer must not block
				ready.Wait()
				event("conn", id, t, "state", ev.State.String(), "server", d.last(), "heard", heard)
			}()
		}),
	}
	if c.loss != nil {
		opts = append(opts, zklock.WithLossLimit(*c.loss))
	}
	s, err := zklock.Connect(c.servers, opts...)
	ready.Done()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.WaitConnected(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	event("session", id, 0, "sid", fmt.Sprintf("0x%x", s.ID()), "server", d.last())
	return s, nil
}

// term reports one term's start and, once, its end.
type term struct {
	id    string
	once  sync.Once
	ended chan struct{}
}

func startTerm(id string) *term {
	event("start", id, 0)
	return &term{id: id, ended: make(chan struct{})}
}

func (t *term) end(why string) {
	t.once.Do(func() {
		event("end", t.id, 0, "why", why)
		close(t.ended)
	})
}

// base is what every participant has: its session, the goroutine running
// it, and the leave signal.
type base struct {
	id     string
	s      *zklock.Session
	cancel context.CancelFunc
	leaveC chan struct{}
	done   chan struct{}
	mu     sync.Mutex
	cur    *term // the live term, nil when not leading
}

func (b *base) setTerm(t *term) {
	b.mu.Lock()
	b.cur = t
	b.mu.Unlock()
}

// leave ends the live term (reported now, before anything is released),
// then stops the participant and closes its session.
func (b *base) leave() {
	b.mu.Lock()
	t := b.cur
	b.mu.Unlock()
	if t != nil {
		t.end("leave")
	}
	close(b.leaveC)
	<-b.done
	_ = b.s.Close()
}

func (b *base) close() {
	b.cancel()
	<-b.done
	_ = b.s.Close()
}

func newBase(id string, s *zklock.Session) (*base, context.Context) {
	ctx, cancel := context.WithCancel(context.Background())
	return &base{id: id, s: s, cancel: cancel, leaveC: make(chan struct{}), done: make(chan struct{})}, ctx
}

func joinElection(id string, c joinConfig) (participant, error) {
	s, err := session(id, c)
	if err != nil {
		return nil, err
	}
	e, err := zklock.NewLeaderElection(s, c.path, id, zklock.WithRequeue())
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	b, ctx := newBase(id, s)
	go func() {
		defer close(b.done)
		err := e.Run(ctx, func(tctx context.Context, _ *zklock.Leadership) error {
			t := startTerm(id)
			b.setTerm(t)
			defer b.setTerm(nil)
			select {
			case <-tctx.Done():
				t.end(context.Cause(tctx).Error())
				return nil
			case <-b.leaveC: // leave reported the end
				return errLeave
			}
		})
		if err != nil && !errors.Is(err, errLeave) && ctx.Err() == nil {
			event("error", id, 0, "msg", err.Error())
		}
	}()
	return b, nil
}

func joinLatch(id string, c joinConfig) (participant, error) {
	s, err := session(id, c)
	if err != nil {
		return nil, err
	}
	l, err := zklock.NewLeaderLatch(s, c.path, id)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	b, ctx := newBase(id, s)
	if err := l.Start(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	go func() {
		defer close(b.done)
		defer func() { _ = l.Close() }()
		for {
			h, err := l.Await(ctx)
			if err != nil {
				return
			}
			t := startTerm(id)
			b.setTerm(t)
			select {
			case <-h.Done():
				t.end(h.Err().Error())
				b.setTerm(nil)
			case <-b.leaveC:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return b, nil
}

// orderedDialer makes a zklock session try the servers in the order
// given. The session keeps go-zookeeper's round robin over the list
// go-zookeeper shuffled (a zk.WithHostProvider has no effect on it), one
// dial per server it moves to; this dialer dials the given list's servers
// in turn instead, so the session starts on the first and then moves on as
// it would. It also notes when a server was last heard from: the arrival
// of the latest bytes on any of its connections (CLOCK_MONOTONIC), within
// a round trip of the session's own reckoning, which counts from when the
// answered request was sent.
type orderedDialer struct {
	mu      sync.Mutex
	servers []string
	next    int    // index of the server the next dial goes to
	dialled string // the server dialled last
	heard   atomic.Int64
}

func (d *orderedDialer) dial(network, _ string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	addr := d.servers[d.next]
	d.next = (d.next + 1) % len(d.servers)
	d.dialled = addr
	d.mu.Unlock()
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return heardConn{c, &d.heard}, nil
}

// heardConn stamps heard whenever bytes arrive.
type heardConn struct {
	net.Conn
	heard *atomic.Int64
}

func (c heardConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.heard.Store(mono())
	}
	return n, err
}

// last returns the server dialled last.
func (d *orderedDialer) last() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dialled
}
