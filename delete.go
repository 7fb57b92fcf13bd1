package zklock

// Where nodes are deleted. Every delete is Session.remove (request.go);
// this file decides when: at once while connected, or by the cleaner in the
// background, retrying until the delete succeeds, the node is gone, or the
// session that owned it is gone (its ephemeral nodes go with it).

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// connectedAs returns a context that lasts as long as the current
// connection, if the session is connected as ZooKeeper session sid: the
// bound of requests that must not wait for a dead connection.
func (s *Session) connectedAs(sid int64) (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != StateConnected || s.sid != sid {
		return nil, false
	}
	return s.connCtx, true
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

// deleteReleased deletes a released hold's node within the current
// connection, or else in the background, and the error says so. handoff
// marks an exclusive queue's head, handed to a local waiter first.
func (s *Session) deleteReleased(node string, sid int64, handoff bool) error {
	ctx, ok := s.connectedAs(sid)
	var err error
	switch {
	case !ok:
		state, _, _ := s.snapshot()
		err = fmt.Errorf("%w: session %v", ErrUnreachable, state)
	case handoff:
		s.handoffs.release(node)
		err = s.remove(ctx, node)
	default:
		err = s.remove(ctx, node)
	}
	if err != nil && ctx != nil && ctx.Err() != nil {
		err = fmt.Errorf("%w: connection lost", ErrUnreachable)
	}
	if err != nil && (isConnErr(err) || errors.Is(err, ErrUnreachable)) {
		s.cleaner.deleteNode(node, sid)
		err = fmt.Errorf("%w (the node is deleted in the background)", err)
	}
	return err
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

// await registers a waiter's interest in the node at p.
func (hs *handoffs) await(p string) *handoff {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = make(map[string]*handoff)
	}
	h := hs.m[p]
	if h == nil {
		h = &handoff{released: make(chan struct{})}
		hs.m[p] = h
	}
	h.users++
	return h
}

func (hs *handoffs) drop(p string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h := hs.m[p]; h != nil {
		if h.users--; h.users == 0 {
			delete(hs.m, p)
		}
	}
}

// release tells the local waiters on node, the head released by its
// holder, that the lock is theirs.
func (hs *handoffs) release(node string) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h := hs.m[node]; h != nil {
		delete(hs.m, node)
		close(h.released)
	}
}

// any reports whether a waiter is registered.
func (hs *handoffs) any() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hs.m) > 0
}

// done returns the channel closed when the node is handed over (nil,
// never ready, without a registration).
func (h *handoff) done() <-chan struct{} {
	if h == nil {
		return nil
	}
	return h.released
}

// handedOff reports whether the node h was registered on has been handed
// over to this session's waiter.
func (h *handoff) handedOff() bool {
	select {
	case <-h.done():
		return true
	default:
		return false
	}
}
