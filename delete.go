package zklock

// Where nodes are deleted. Every delete is Session.remove (request.go);
// this file decides when: at once while connected, or by the cleaner in the
// background, retrying until the delete succeeds, the node is gone, or the
// session that owned it is gone (its ephemeral nodes go with it). A
// released hold's node is deleted by deleteReleased (hold.go).

import (
	"context"
	"errors"
	"strings"

	"github.com/go-zookeeper/zk"
)

// cleaner deletes, in the background, nodes that a failed or abandoned
// operation may have left behind, until the delete succeeds or the node's
// session is gone.
type cleaner struct {
	s       *Session
	jobs    []cleanJob
	running bool
}

type cleanJob struct {
	dir, prefix string // find-and-delete: a child of dir starting with prefix
	node        string // or this node
	sid         int64  // the session that owns the node
}

// abandon deletes a node we no longer want: now if connected, otherwise in
// the background.
func (s *Session) abandon(node string, sid int64) {
	if ctx, ok := s.connectedAs(sid); ok {
		if err := s.remove(ctx, node); err == nil || !isConnErr(err) && ctx.Err() == nil {
			return
		}
	}
	s.cleaner.deleteNode(node, sid)
}

func ignoreNoNode(err error) error {
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

func (c *cleaner) deleteNode(node string, sid int64) { c.add(cleanJob{node: node, sid: sid}) }

func (c *cleaner) findAndDelete(dir, prefix string, sid int64) {
	c.add(cleanJob{dir: dir, prefix: prefix, sid: sid})
}

func (c *cleaner) add(j cleanJob) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateClosed {
		return
	}
	c.jobs = append(c.jobs, j)
	if !c.running {
		c.running = true
		s.bg.Go(c.run)
	}
}

func (c *cleaner) run() {
	s := c.s
	for attempt := 0; ; {
		s.mu.Lock()
		if len(c.jobs) == 0 || s.state == StateClosed {
			c.jobs, c.running = nil, false
			s.mu.Unlock()
			return
		}
		j := c.jobs[0]
		state, changed := s.state, s.changed
		s.mu.Unlock()

		if state != StateConnected {
			select { // wait for the connection to come back
			case <-changed:
			case <-s.quit:
			}
			continue
		}
		// The job is tried whatever session is current: the node's name
		// (our UUID) is ours alone, and a create sent while reconnecting
		// runs under the session the server grants next.
		err := c.do(j)
		done := err == nil || !isConnErr(err)
		if err != nil && !isConnErr(err) {
			s.log.Warn("zklock: cleanup gave up", "node", j.node+j.prefix, "err", err, "session", j.sid)
		}
		if !done {
			if s.cfg.retry.sleep(quitContext{s.quit}, attempt) != nil {
				continue
			}
			attempt++
			continue
		}
		attempt = 0
		s.mu.Lock()
		if len(c.jobs) > 0 {
			c.jobs = c.jobs[1:]
		}
		s.mu.Unlock()
	}
}

func (c *cleaner) do(j cleanJob) error {
	ctx := context.Background() // the request ends with its reply or the connection
	if j.node != "" {
		return c.s.remove(ctx, j.node)
	}
	// As in find: a lagging server would list the directory without it.
	if !negNoSync { // test-only (negative_off.go)
		if err := c.s.sync(ctx, j.dir); err != nil {
			return err
		}
	}
	children, err := c.s.list(ctx, j.dir)
	if err != nil {
		return ignoreNoNode(err)
	}
	for _, name := range children {
		if strings.HasPrefix(name, j.prefix) {
			if err := c.s.remove(ctx, j.dir+"/"+name); err != nil {
				return err
			}
		}
	}
	return nil
}
