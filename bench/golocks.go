package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
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
		s, err := zklock.Connect([]string{server}, zklock.WithSessionTimeout(sessionTimeout))
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.WaitConnected(ctx); err != nil {
			_ = s.Close()
			return nil, err
		}
		return &zklockClient{s: s, mk: mk}, nil
	}}
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

// goZKLock is go-zookeeper's zk.Lock.
var goZKLock = goLib{name: "go-zookeeper-lock", open: func(server string) (goClient, error) {
	conn, err := connectZK(server)
	if err != nil {
		return nil, err
	}
	return &zkLockClient{zkClient{conn}}, nil
}}

type zkLockClient struct{ zkClient }

func (c *zkLockClient) locker(path string) (goLocker, error) {
	return zkLocker{zk.NewLock(c.conn, path, acl)}, nil
}

type zkLocker struct{ l *zk.Lock }

func (l zkLocker) lock() error   { return l.l.Lock() }
func (l zkLocker) unlock() error { return l.l.Unlock() }

// floorCycle is the bare cycle an uncontended lock cannot beat: create an
// ephemeral sequential node, list the directory, delete the node. It
// excludes nothing, so it is only measured uncontended.
var floorCycle = goLib{name: "floor-cycle", open: func(server string) (goClient, error) {
	conn, err := connectZK(server)
	if err != nil {
		return nil, err
	}
	return &cycleClient{zkClient{conn}}, nil
}}

type cycleClient struct{ zkClient }

func (c *cycleClient) locker(path string) (goLocker, error) {
	if err := mkdirs(c.conn, path); err != nil {
		return nil, err
	}
	return &cycleLocker{conn: c.conn, dir: path}, nil
}

type cycleLocker struct {
	conn      *zk.Conn
	dir, node string
}

func (l *cycleLocker) lock() error {
	node, err := l.conn.Create(l.dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		return err
	}
	l.node = node
	_, _, err = l.conn.Children(l.dir)
	return err
}

func (l *cycleLocker) unlock() error { return l.conn.Delete(l.node, -1) }

// floorCycleExists is floorCycle plus a read of the new node's Stat in
// parallel with the listing: what zklock's acquire does to learn its fencing
// token (the node's czxid). It shows what that read costs.
var floorCycleExists = goLib{name: "floor-cycle+exists", open: func(server string) (goClient, error) {
	conn, err := connectZK(server)
	if err != nil {
		return nil, err
	}
	return &cycleExistsClient{cycleClient{zkClient{conn}}}, nil
}}

type cycleExistsClient struct{ cycleClient }

func (c *cycleExistsClient) locker(path string) (goLocker, error) {
	l, err := c.cycleClient.locker(path)
	if err != nil {
		return nil, err
	}
	return &cycleExistsLocker{l.(*cycleLocker)}, nil
}

type cycleExistsLocker struct{ *cycleLocker }

func (l *cycleExistsLocker) lock() error {
	node, err := l.conn.Create(l.dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		return err
	}
	l.node = node
	statErr := make(chan error, 1)
	go func() {
		_, _, err := l.conn.Exists(node)
		statErr <- err
	}()
	_, _, err = l.conn.Children(l.dir)
	return errors.Join(err, <-statErr)
}

// floorPipelined is the pipelined cycle floor, the least a synchronous
// acquire+release can cost: the create and the listing sent together (the
// listing as soon as the create request is on the wire, which ZooKeeper
// answers after applying the create), then the delete. Three requests, two
// round trips.
var floorPipelined = goLib{name: "floor-pipelined", open: func(server string) (goClient, error) {
	w := &writeTap{creates: make(chan struct{}, 1)}
	conn, err := connectZKDial(server, w.dial)
	if err != nil {
		return nil, err
	}
	return &pipelinedClient{cycleClient{zkClient{conn}}, w}, nil
}}

// writeTap wraps a connection's writes to signal each create request as
// go-zookeeper writes it (one Write per request frame).
type writeTap struct{ creates chan struct{} }

func (w *writeTap) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, creates: w.creates}, nil
}

type tapConn struct {
	net.Conn
	creates chan struct{}
}

func (c *tapConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	// length(4) xid(4) opcode(4): a create request (opcode 1).
	if err == nil && len(b) >= 12 && binary.BigEndian.Uint32(b[8:12]) == 1 {
		select {
		case c.creates <- struct{}{}:
		default:
		}
	}
	return n, err
}

type pipelinedClient struct {
	cycleClient
	tap *writeTap
}

func (c *pipelinedClient) locker(path string) (goLocker, error) {
	l, err := c.cycleClient.locker(path)
	if err != nil {
		return nil, err
	}
	return &pipelinedLocker{cycleLocker: l.(*cycleLocker), creates: c.tap.creates}, nil
}

type pipelinedLocker struct {
	*cycleLocker
	creates chan struct{}
}

func (l *pipelinedLocker) lock() error {
	select { // a signal left from an earlier cycle
	case <-l.creates:
	default:
	}
	type created struct {
		node string
		err  error
	}
	res := make(chan created, 1)
	go func() {
		node, err := l.conn.Create(l.dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
		res <- created{node, err}
	}()
	var c created
	select {
	case <-l.creates: // on the wire: list behind it
		_, _, err := l.conn.Children(l.dir)
		c = <-res
		if err != nil {
			return errors.Join(c.err, err)
		}
	case c = <-res: // answered before the signal was seen: list now
		if c.err == nil {
			_, _, c.err = l.conn.Children(l.dir)
		}
	}
	l.node = c.node
	return c.err
}

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
