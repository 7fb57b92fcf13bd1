package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-zookeeper/zk"
)

// floorPart is the failover floor's participant: no lock logic, only the
// protocol's least for a handoff: the leader deletes its node, and the next
// in line, which had an exists watch armed on it, holds on the notification
// (it lists nothing; in this benchmark it is the only one waiting).
type floorPart struct {
	id   string
	conn *zk.Conn
	node string
	cur  chan *term // holds the live term once it starts
	quit chan struct{}
	done chan struct{}
}

var acl = zk.WorldACL(zk.PermAll)

func joinFloor(id string, c joinConfig) (participant, error) {
	conn, ev, err := zk.Connect(c.servers, c.timeout, zk.WithHostProvider(newOrdered(c.servers)), zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	go func() {
		for range ev { //nolint:revive // session events are not reported for the floor
		}
	}()
	p := &floorPart{id: id, conn: conn, cur: make(chan *term, 1), quit: make(chan struct{}), done: make(chan struct{})}
	if err := p.enqueue(c.path); err != nil {
		conn.Close()
		return nil, err
	}
	return p, nil
}

// enqueue creates the node and starts waiting for the predecessor's end.
func (p *floorPart) enqueue(dir string) error {
	for i := 1; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		if _, err := p.conn.Create(dir[:i], nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", dir[:i], err)
		}
	}
	node, err := p.conn.Create(dir+"/n-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
	if err != nil {
		return err
	}
	p.node = node
	kids, _, err := p.conn.Children(dir)
	if err != nil {
		return err
	}
	slices.Sort(kids) // one prefix: the sequence orders them
	me := slices.Index(kids, strings.TrimPrefix(node, dir+"/"))
	var wait <-chan zk.Event
	if me > 0 {
		ok, _, ch, err := p.conn.ExistsW(dir + "/" + kids[me-1])
		if err != nil {
			return err
		}
		if ok {
			wait = ch
		}
	}
	go func() {
		defer close(p.done)
		if wait != nil {
			select {
			case <-wait:
			case <-p.quit:
				return
			}
		}
		p.cur <- startTerm(p.id)
	}()
	return nil
}

func (p *floorPart) leave() {
	select {
	case t := <-p.cur:
		t.end("leave")
	default: // not leading
	}
	p.close()
}

func (p *floorPart) close() {
	close(p.quit)
	<-p.done
	_ = p.conn.Delete(p.node, -1)
	p.conn.Close()
}
