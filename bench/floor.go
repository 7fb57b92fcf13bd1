package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// floorHandoff is the bare delete→watch floor, the least a handoff can
// cost: a chain of n ephemeral nodes owned alternately by two sessions
// (on servers[0] and servers[1%len]), each node's owner watching the node
// before it. The first owner deletes its node; every deletion notifies the
// other session, which deletes its next node at once. Nodes and watches are
// all in place before the clock starts, so a handoff is exactly one delete
// (a logged write) and one watch notification: one round trip. Ops is the
// number of handoffs (n-1); Lat holds each handoff's time from the previous
// deletion's reply to this one's.
func floorHandoff(servers []string, dir string, n int) (Run, error) {
	return chain(servers, dir, n, false)
}

// floorListed is the listed-handoff floor, the least a fair and safe
// handoff across sessions can cost: floorHandoff's chain, but the notified
// session lists the directory (getChildren, as a waiter must to know it is
// first) before it holds and deletes its node. Delete, notification,
// listing: two round trips per handoff, no lock logic.
func floorListed(servers []string, dir string, n int) (Run, error) {
	return chain(servers, dir, n, true)
}

func chain(servers []string, dir string, n int, list bool) (Run, error) {
	var conns [2]*zk.Conn
	for i := range conns {
		c, err := connectZK(servers[i%len(servers)])
		if err != nil {
			return Run{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	if err := mkdirs(conns[0], dir); err != nil {
		return Run{}, err
	}
	node := func(i int) string { return fmt.Sprintf("%s/n-%06d", dir, i) }
	// Create the chain with a few requests in flight.
	if err := parallel(n, 32, func(i int) error {
		_, err := conns[i%2].Create(node(i), nil, zk.FlagEphemeral, acl)
		return err
	}); err != nil {
		return Run{}, err
	}
	// On an ensemble the other session's server may not have applied every
	// create yet; a sync makes it catch up.
	if _, err := conns[1].Sync(dir); err != nil {
		return Run{}, err
	}
	watches := make([]<-chan zk.Event, n)
	if err := parallel(n-1, 32, func(i int) error {
		ok, _, ch, err := conns[(i+1)%2].ExistsW(node(i))
		if err == nil && !ok {
			err = fmt.Errorf("bench: %s vanished", node(i))
		}
		watches[i+1] = ch
		return err
	}); err != nil {
		return Run{}, err
	}
	done := make([]time.Time, n)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	start := time.Now()
	for side := range 2 {
		wg.Go(func() {
			for i := side; i < n; i += 2 {
				if i > 0 {
					if ev := <-watches[i]; ev.Type != zk.EventNodeDeleted {
						errs[side] = fmt.Errorf("bench: watch on %s: %v %v", node(i-1), ev.Type, ev.Err)
						return
					}
					if list {
						if _, _, err := conns[side].Children(dir); err != nil {
							errs[side] = err
							return
						}
					}
				}
				if err := conns[side].Delete(node(i), -1); err != nil {
					errs[side] = err
					return
				}
				done[i] = time.Now()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Run{}, err
	}
	r := Run{Ops: n - 1, Elapsed: done[n-1].Sub(start)}
	for i := 1; i < n; i++ {
		r.Lat = append(r.Lat, done[i].Sub(done[i-1]))
	}
	r.finish()
	return r, nil
}

// floor reports whether a target is a floor (measured uncontended only, or
// the handoff chain).
func floor(name string) bool { return strings.HasPrefix(name, "floor-") }

// floorCycle is the bare cycle an uncontended lock cannot beat: create an
// ephemeral sequential node, list the directory, delete the node. It
// excludes nothing, so it is only measured uncontended.
var floorCycle = zkLib("floor-cycle", func(c zkClient) goClient { return &cycleClient{c} })

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
var floorCycleExists = zkLib("floor-cycle+exists", func(c zkClient) goClient { return &cycleExistsClient{cycleClient{c}} })

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
