package zklock

// Every ZooKeeper request the library sends, one function each. Each is
// bounded by its caller's context (see call): go-zookeeper's requests take
// none, and one queued on a dead connection would otherwise wait for the
// client's own timeouts. Requests made in the background (the cleaner, the
// holder's watch) pass context.Background(): they end with their reply or
// with the connection, which go-zookeeper fails every pending request on.

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

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

// sync makes the server the session is connected to catch up with the
// leader before it answers the session's next request (ZooKeeper's sync): a
// listing sent after it sees every write the leader had committed when the
// sync reached it. ZooKeeper syncs the whole server; path only names the
// request. It costs a round trip through the leader, so only the search
// for the node of an ambiguous create sends it (create.go).
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
// error. It is the one delete the library sends; delete.go decides when.
func (s *Session) remove(ctx context.Context, node string) error {
	_, err := call(ctx, func() (struct{}, error) { return struct{}{}, s.conn.Delete(node, -1) }, nil)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// createNode creates a node and returns its path. If ctx ends first, late
// gets the outcome once it is known, so that a node created after its
// caller gave up can be deleted.
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
