package zklock

// Every ZooKeeper request the library sends, one function each, bounded by
// its caller's context (see call). Background requests pass
// context.Background(): go-zookeeper fails them with the connection.

import (
	"context"
	"errors"
	"sync"

	"github.com/go-zookeeper/zk"
)

// waitReady waits until the session's credentials are in place, so that no
// node is created before the server knows who creates it.
func (s *Session) waitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		return s.authErr
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// call runs one ZooKeeper request and returns when it completes or ctx
// ends, whichever comes first: go-zookeeper's requests take no context, and
// one queued on a dead connection waits for the client's own timeouts. An
// abandoned request still completes; late, if not nil, gets its result.
func call[T any](ctx context.Context, f func() (T, error), late func(T, error)) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	var (
		mu        sync.Mutex
		abandoned bool
		resc      = make(chan result, 1)
	)
	go func() {
		v, err := f()
		mu.Lock()
		defer mu.Unlock()
		if abandoned {
			if late != nil {
				go late(v, err)
			}
			return
		}
		resc <- result{v, err}
	}()
	select {
	case r := <-resc:
		return r.v, r.err
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case r := <-resc: // it completed as ctx ended
		return r.v, r.err
	default:
		abandoned = true
		var zero T
		return zero, context.Cause(ctx)
	}
}

// call2 adapts a request with two results besides the error.
func call2[A, B any](ctx context.Context, f func() (A, B, error)) (A, B, error) {
	type pair struct {
		a A
		b B
	}
	p, err := call(ctx, func() (pair, error) {
		a, b, err := f()
		return pair{a, b}, err
	}, nil)
	return p.a, p.b, err
}

// list returns dir's children.
func (s *Session) list(ctx context.Context, dir string) ([]string, error) {
	children, _, err := call2(ctx, func() ([]string, *zk.Stat, error) { return s.conn.Children(dir) })
	return children, err
}

// listWatch returns dir's children and sets a children watch on dir.
func (s *Session) listWatch(ctx context.Context, dir string) ([]string, <-chan zk.Event, error) {
	return call2(ctx, func() ([]string, <-chan zk.Event, error) {
		children, _, ch, err := s.conn.ChildrenW(dir)
		return children, ch, err
	})
}

// existsWatch reports whether p exists and watches it: a data watch if it
// does, a creation watch if it does not.
func (s *Session) existsWatch(ctx context.Context, p string) (bool, <-chan zk.Event, error) {
	return call2(ctx, func() (bool, <-chan zk.Event, error) {
		ok, _, ch, err := s.conn.ExistsW(p)
		return ok, ch, err
	})
}

// stat returns node's stat, or an error wrapping zk.ErrNoNode.
func (s *Session) stat(ctx context.Context, node string) (*zk.Stat, error) {
	ok, stat, err := call2(ctx, func() (bool, *zk.Stat, error) { return s.conn.Exists(node) })
	if err == nil && !ok {
		err = zk.ErrNoNode
	}
	return stat, err
}

// sync makes the session's server catch up with the leader before it
// answers the session's next request (ZooKeeper syncs the whole server;
// path only names the request). It costs a round trip through the leader.
func (s *Session) sync(ctx context.Context, path string) error {
	_, err := call(ctx, func() (string, error) { return s.conn.Sync(path) }, nil)
	return err
}

// read returns node's data and stat.
func (s *Session) read(ctx context.Context, node string) ([]byte, *zk.Stat, error) {
	return call2(ctx, func() ([]byte, *zk.Stat, error) { return s.conn.Get(node) })
}

// readWatch returns node's data and stat and sets a data watch on it. A
// node that does not exist gets no watch (zk.ErrNoNode), so none lingers.
func (s *Session) readWatch(ctx context.Context, node string) ([]byte, *zk.Stat, <-chan zk.Event, error) {
	type res struct {
		data []byte
		stat *zk.Stat
		ch   <-chan zk.Event
	}
	r, err := call(ctx, func() (res, error) {
		data, stat, ch, err := s.conn.GetW(node)
		return res{data, stat, ch}, err
	}, nil)
	return r.data, r.stat, r.ch, err
}

// remove deletes node, whatever its version; a node already gone is no
// error. It is the one delete the library sends; delete.go and
// Session.deleteReleased (hold.go) decide when.
func (s *Session) remove(ctx context.Context, node string) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, s.conn.Delete(node, -1) }, nil)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// createNode creates a node and returns its path; late is as for call.
func (s *Session) createNode(ctx context.Context, name string, data []byte, flags int32, acl []zk.ACL, late func(string, error)) (string, error) {
	return call(ctx, func() (string, error) { return s.conn.Create(name, data, flags, acl) }, late)
}

// createDir creates dir as an empty CONTAINER node.
func (s *Session) createDir(ctx context.Context, dir string, acl []zk.ACL) error {
	_, err := call(ctx, func() (string, error) { return s.conn.CreateContainer(dir, []byte{}, zk.FlagContainer, acl) }, nil)
	return err
}

// addAuth sends credentials; go-zookeeper sends them again after every
// reconnect.
func (s *Session) addAuth(ctx context.Context, scheme string, cred []byte) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, s.conn.AddAuth(scheme, cred) }, nil)
	return err
}

// setData writes data to node, whatever its version.
func (s *Session) setData(ctx context.Context, node string, data []byte) error {
	_, err := call(ctx, func() (*zk.Stat, error) { return s.conn.Set(node, data, -1) }, nil)
	return err
}

// setDataVersion writes data to node if its data version is still version
// (zk.ErrBadVersion otherwise).
func (s *Session) setDataVersion(ctx context.Context, node string, data []byte, version int32) error {
	_, err := call(ctx, func() (*zk.Stat, error) { return s.conn.Set(node, data, version) }, nil)
	return err
}
