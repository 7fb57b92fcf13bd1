package zklock

// The engine. Every recipe is a queue in a lock directory plus a recipe
// value that says how its nodes are named and when one holds; the engine
// does the rest, the same way for all: lock and acquire (watcher.go)
// create a protected node with the first listing pipelined behind it
// (create.go), decide by the rule (rules.go), wait for the one node the
// rule names, and register the hold (hold.go). Every failure deletes the
// node it created (delete.go). See docs/protocol.md#the-engine.

import (
	"fmt"

	"github.com/go-zookeeper/zk"
)

// queue is one recipe's view of a lock directory.
type queue struct {
	recipe
	s    *Session
	path string // the lock path the caller named
	dir  string // the znode directory that holds the nodes (namespace included)
	cfg  lockConfig
	key  any // identifies this queue's holds in ctx, for re-entry: a holdKey, boxed once

	try   bool // never wait for another participant: ErrLocked where a wait would start
	probe bool // before creating, list once and refuse with ErrLocked if ours would wait
}

// entry is our node in the queue.
type entry struct {
	dir, name string
	node      string   // dir + "/" + name
	sid       int64    // the session that created it
	stat      *zk.Stat // Czxid (the fencing token) and EphemeralOwner, once known
}

// newQueue checks a recipe's arguments and returns its queue in dir, which
// is lockPath or a directory under it.
func newQueue(s *Session, lockPath, dir string, r recipe, opts []Option) (queue, error) {
	if s == nil {
		return queue{}, fmt.Errorf("%w: nil session", ErrInvalidArgument)
	}
	if err := ValidatePath(lockPath); err != nil {
		return queue{}, err
	}
	cfg := newLockConfig(opts)
	if err := validOwner(cfg.owner); err != nil {
		return queue{}, err
	}
	if needsAuth(cfg.acl) && len(s.cfg.auth) == 0 {
		return queue{}, fmt.Errorf("%w: the ACL of %s names the creator (\"auth\", CreatorACL), which needs the session's credentials (WithAuth)",
			ErrInvalidArgument, lockPath)
	}
	dir = s.FullPath(dir)
	if err := checkRequestSize(dir, cfg.data, cfg.acl); err != nil {
		return queue{}, err
	}
	return queue{recipe: r, s: s, path: lockPath, dir: dir, cfg: cfg, key: holdKey{s, dir, r.mark}}, nil
}

// tryOnly returns a copy of q that never waits for another participant and
// writes nothing where it would have to.
func (q queue) tryOnly() *queue {
	q.try, q.probe = true, true
	return &q
}
