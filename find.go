package zklock

// After a create whose outcome is unknown: finding the node it may have
// made, adopting our own node found ahead of ours, reading the token of a
// node found; and creating a missing lock directory.

import (
	"context"
	"errors"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"
)

// find looks for our protected prefix after an ambiguous create. It syncs
// the server first: the session may have moved to a follower that has not
// yet applied the create (the client never saw the create's zxid, so the
// follower accepted the session), where a plain listing would miss the
// node and a second create would queue behind it. Of the nodes found, it
// adopts the earliest that our session owns and hands the others to the
// cleaner: later attempts of ours, or a node that an older session left
// (an expired session's nodes may still be listed by a lagging server).
// A sync costs a round trip through the leader, on this path only.
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

// adopt moves the acquisition to w.p, the node of its own that the listing
// showed ahead of ours (see sameCreate), and deletes ours: the earlier node
// keeps our place, and its czxid, read here, is the hold's token. A node at
// w.p that another session owns is an expired older session's of ours: it
// is deleted and waited for, since a lagging server may list it until it
// has applied the expiry.
func (w *waiter) adopt() step {
	p := w.p
	stat, err := w.q.s.stat(w.ctx, p)
	switch {
	case err != nil && w.ctx.Err() != nil:
		return stepCancelled
	case errors.Is(err, zk.ErrNoNode):
		return stepList
	case permanent(err):
		return w.fail(refused(err, accessRead, p, "our own earlier node"))
	case err != nil:
		w.attempt = w.q.s.cfg.retry.wait(w.ctx, w.attempt) // listing again reports or retries the error
		return stepList
	case stat.EphemeralOwner != w.e.sid:
		w.q.s.cleaner.deleteNode(p, stat.EphemeralOwner)
		w.watch(p, false)
		return stepArm
	}
	if w.token != nil { // the token of the node we leave, read after a lost create reply
		<-w.token
		w.token = nil
	}
	old := w.e
	w.e = &entry{dir: old.dir, name: path.Base(p), node: p, sid: old.sid, stat: stat}
	w.q.s.abandon(old.node, old.sid)
	return stepList
}

// tokenRead is the outcome of readToken's read.
type tokenRead struct {
	stat *zk.Stat
	err  error
}

// readToken starts reading the token of a node found after a lost create
// reply (its entry has no stat), alongside the first listing, so it adds
// no round trip. finish waits for it.
func (w *waiter) readToken() {
	w.token = make(chan tokenRead, 1)
	ctx, node := w.ctx, w.e.node
	go func() {
		stat, err := w.q.s.stat(ctx, node)
		w.token <- tokenRead{stat, err}
	}()
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
