package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// A goLocker is one participant's handle on one lock, used by one goroutine.
type goLocker interface {
	lock() error
	unlock() error
}

// A goClient is one ZooKeeper session of a Go library.
type goClient interface {
	locker(path string) (goLocker, error)
	zkConn() *zk.Conn // the session's connection (for the census's hold markers)
	close()
}

// goLib opens sessions of one Go lock implementation.
type goLib struct {
	name string
	open func(server string) (goClient, error)
}

const sessionTimeout = 10 * time.Second

var acl = zk.WorldACL(zk.PermAll)

// zklockLib is zklock's recipe built by mk on a fresh Session.
func zklockLib(name string, mk func(s *zklock.Session, path string) (func(context.Context) (*zklock.Hold, error), error)) goLib {
	return goLib{name: name, open: func(server string) (goClient, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := connectSession(ctx, server)
		if err != nil {
			return nil, err
		}
		return &zklockClient{s: s, mk: mk}, nil
	}}
}

// connectSession opens a zklock session on server and waits, within ctx,
// until it is connected.
func connectSession(ctx context.Context, server string) (*zklock.Session, error) {
	s, err := zklock.Connect([]string{server}, zklock.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return nil, err
	}
	if err := s.WaitConnected(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

type zklockClient struct {
	s  *zklock.Session
	mk func(s *zklock.Session, path string) (func(context.Context) (*zklock.Hold, error), error)
}

func (c *zklockClient) locker(path string) (goLocker, error) {
	lock, err := c.mk(c.s, path)
	if err != nil {
		return nil, err
	}
	return &zklockLocker{lockFn: lock}, nil
}

func (c *zklockClient) close() { _ = c.s.Close() }

func (c *zklockClient) zkConn() *zk.Conn { return c.s.Conn() }

type zklockLocker struct {
	lockFn func(context.Context) (*zklock.Hold, error)
	h      *zklock.Hold
}

func (l *zklockLocker) lock() (err error) {
	l.h, err = l.lockFn(context.Background())
	return err
}

func (l *zklockLocker) unlock() error { return l.h.Release() }

// zklockMutex is zklock.Mutex.
var zklockMutex = zklockLib("zklock-mutex", func(s *zklock.Session, path string) (func(context.Context) (*zklock.Hold, error), error) {
	m, err := zklock.NewMutex(s, path)
	if err != nil {
		return nil, err
	}
	return m.Lock, nil
})

// connectZK opens a plain go-zookeeper connection and waits for its session.
func connectZK(server string) (*zk.Conn, error) { return connectZKDial(server, nil) }

// connectZKDial is connectZK through dial (nil: go-zookeeper's own).
func connectZKDial(server string, dial zk.Dialer) (*zk.Conn, error) {
	return connectZKAll([]string{server}, dial)
}

// connectZKAll is connectZKDial to any of servers.
func connectZKAll(servers []string, dial zk.Dialer) (*zk.Conn, error) {
	opt := func(c *zk.Conn) {
		zk.WithLogInfo(false)(c)
		zk.WithLogger(silent{})(c) // the failover phase's faults make it complain
		if dial != nil {
			zk.WithDialer(dial)(c)
		}
	}
	conn, ev, err := zk.Connect(servers, sessionTimeout, opt)
	if err != nil {
		return nil, err
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == zk.StateHasSession {
				go drain(ev)
				return conn, nil
			}
		case <-timeout:
			conn.Close()
			return nil, fmt.Errorf("bench: no session from %v", servers)
		}
	}
}

// silent is a go-zookeeper logger that discards.
type silent struct{}

func (silent) Printf(string, ...any) {}

func drain(ev <-chan zk.Event) {
	for range ev { //nolint:revive // discard session events until the connection closes
	}
}

type zkClient struct{ conn *zk.Conn }

func (c *zkClient) close() { c.conn.Close() }

func (c *zkClient) zkConn() *zk.Conn { return c.conn }

// zkLib is a Go library whose sessions are plain go-zookeeper
// connections, wrapped by wrap.
func zkLib(name string, wrap func(zkClient) goClient) goLib {
	return goLib{name: name, open: func(server string) (goClient, error) {
		conn, err := connectZK(server)
		if err != nil {
			return nil, err
		}
		return wrap(zkClient{conn}), nil
	}}
}

// goZKLock is go-zookeeper's zk.Lock.
var goZKLock = zkLib("go-zookeeper-lock", func(c zkClient) goClient { return &zkLockClient{c} })

type zkLockClient struct{ zkClient }

func (c *zkLockClient) locker(path string) (goLocker, error) {
	return zkLocker{zk.NewLock(c.conn, path, acl)}, nil
}

type zkLocker struct{ l *zk.Lock }

func (l zkLocker) lock() error   { return l.l.Lock() }
func (l zkLocker) unlock() error { return l.l.Unlock() }

// mkdirs creates path and its parents as persistent nodes.
func mkdirs(conn *zk.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := conn.Create(path[:i], nil, 0, acl)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("bench: create %s: %w", path[:i], err)
		}
	}
	return nil
}

// goLibs are the Go implementations measured in this process.
func goLibs() []goLib {
	return append([]goLib{zklockMutex}, append(extraZklock, goZKLock, floorCycle, floorCycleExists, floorPipelined)...)
}

// extraZklock holds the zklock recipes besides Mutex (see recipes.go).
var extraZklock []goLib
