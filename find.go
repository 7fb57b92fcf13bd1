package zklock

// After a create whose outcome is unknown: finding the node it may have
// made; and creating a missing lock directory. Adopting our own node found
// ahead of ours, and reading a found node's token, are steps of the
// acquire (watcher.go).

import (
	"context"
	"errors"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"
)

// find looks for our protected prefix after an ambiguous create, syncing
// the server first (docs/internals.md#finding-after-a-lost-reply). Of the
// nodes found, it adopts the earliest that our session owns and hands the
// others to the cleaner.
func (q *queue) find(ctx context.Context, prefix string, sid int64) (*entry, error) {
	if !negNoSync { // test-only (negative_off.go)
		if err := q.s.sync(ctx, q.dir); err != nil {
			return nil, err
		}
	}
	children, err := q.s.list(ctx, q.dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var found *entry
	for _, c := range sortContenders(slices.DeleteFunc(children, func(name string) bool {
		return len(name) <= len(prefix) || name[:len(prefix)] != prefix
	})) {
		e := &entry{dir: q.dir, name: c.name, node: q.dir + "/" + c.name, sid: sid}
		stat, err := q.s.stat(ctx, e.node)
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return nil, err
		case stat.EphemeralOwner == sid && found == nil:
			found = e
		default:
			q.s.cleaner.deleteNode(e.node, stat.EphemeralOwner)
		}
	}
	return found, nil
}

// mkdirs creates dir and its missing ancestors as CONTAINER nodes with empty
// data, as Curator's creatingParentContainersIfNeeded does.
func (q *queue) mkdirs(ctx context.Context, dir string) error {
	if dir == "/" {
		return nil
	}
	err := q.s.createDir(ctx, dir, q.cfg.acl)
	if errors.Is(err, zk.ErrNoNode) {
		if err := q.mkdirs(ctx, path.Dir(dir)); err != nil {
			return err
		}
		err = q.s.createDir(ctx, dir, q.cfg.acl)
	}
	if err == nil || errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	if r := refused(err, accessCreate, path.Dir(dir), "creating "+dir); r != nil {
		return r
	}
	return err
}
