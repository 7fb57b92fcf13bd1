package zklock

// Creating a contender's node the way Curator's protected mode does, and
// deleting one that is no longer wanted.

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"
)

// create makes our ephemeral sequential node with Curator's protected name.
// After a connection error the outcome is unknown, so before creating again
// it syncs the server and searches the directory for our prefix (see find),
// adopting the node if our session owns it; a node left by an older session
// is deleted. A node that is handed to the cleaner is never searched for
// again: the next attempt gets a new prefix. Should a second node of ours
// queue behind the first all the same, the wait adopts the first (see
// sameCreate). Each create request is followed by a pipelined listing of
// the directory (see pipeline.go), and the entry of the create that
// succeeded carries its listing in first; the listings of failed attempts
// are waited for and dropped before the next attempt. Once an attempt that
// may have made a node was written in a session, that session is the
// acquire's: create fails with ErrSessionExpired when it is gone.
func (q *queue) create(ctx context.Context) (*entry, error) {
	prefix := protectedPrefix()
	ambiguous := false
	var queued int64 // the session the first attempt that may have made a node was written in
	for attempt := 0; ; {
		state, sid, changed := q.s.snapshot()
		if state == StateClosed { // go-zookeeper then answers ErrConnectionClosed, which would be retried until ctx ends
			return nil, ErrClosed
		}
		if sid == 0 && ctx.Err() == nil {
			// Not connected yet: a create queued now would run under a
			// session we cannot name, and could not be cleaned up by it.
			select {
			case <-changed:
			case <-ctx.Done():
			}
			continue
		}
		if queued != 0 && (state == StateExpired || sid != queued) {
			// Our node may have been queued, and seen by the others, in
			// a session that has expired since: it went with the session,
			// and the acquire ends as a waiter's does (see next).
			return nil, ErrSessionExpired
		}
		if ctx.Err() != nil {
			if ambiguous {
				q.s.cleaner.findAndDelete(q.dir, prefix, sid)
			}
			return nil, context.Cause(ctx)
		}
		if ambiguous {
			e, err := q.find(ctx, prefix, sid)
			if err != nil {
				attempt = q.backoff(ctx, attempt)
				continue
			}
			if e != nil {
				return e, nil
			}
			ambiguous = false
		}
		name, flags := q.dir+"/"+prefix+q.mark, int32(zk.FlagEphemeral|zk.FlagSequence)
		if q.fixed != "" {
			name, flags = name+q.fixed, zk.FlagEphemeral
		}
		written := q.s.creates.expect(name) // the reply's zxid is the node's czxid
		first := q.pipeline(ctx, written)
		p, err := q.s.createNode(ctx, name, q.cfg.data, flags, q.cfg.acl,
			// late runs only after ctx ended, and create returns then, so
			// prefix here is still this attempt's.
			func(p string, err error) { // the outcome, known after we gave up
				switch {
				case err == nil:
					q.s.abandon(p, sid)
				case isConnErr(err):
					q.s.cleaner.findAndDelete(q.dir, prefix, sid)
				}
			})
		czxid, known := q.s.creates.zxid(name)
		in, sent := q.s.creates.writtenIn(name)
		q.s.creates.forget(name)
		if sent && queued == 0 && (err == nil || isConnErr(err)) {
			queued = in
		}
		_, now, _ := q.s.snapshot()
		if err == nil && now == sid {
			first.settle(true)
			e := &entry{dir: q.dir, name: path.Base(p), sid: sid, first: first}
			if known {
				e.stat = &zk.Stat{Czxid: czxid, EphemeralOwner: sid}
			}
			return e, nil
		}
		first.discard()
		switch {
		case err != nil && ctx.Err() != nil:
			// The outcome may be unknown (a connection error as ctx ended);
			// a create still in flight is also handled by its late handler.
			q.s.cleaner.findAndDelete(q.dir, prefix, sid)
			return nil, context.Cause(ctx)
		case err == nil:
			// Made by a session we did not see it under (a create queued
			// while suspended runs under the session the server grants
			// next): delete it, and name the next attempt afresh, so that
			// a later search for an ambiguous attempt cannot adopt the
			// node being deleted. (The soak found that: the search
			// adopted it, the cleaner deleted it under the new holder.)
			q.s.cleaner.deleteNode(p, now)
			prefix = protectedPrefix()
			continue
		case errors.Is(err, zk.ErrNoNode):
			if err := q.mkdirs(ctx, q.dir); err != nil && !isConnErr(err) && ctx.Err() == nil {
				return nil, fmt.Errorf("zklock: create parents of %s: %w", q.dir, err)
			}
		case isConnErr(err):
			ambiguous = true
			attempt = q.backoff(ctx, attempt)
		case errors.Is(err, zk.ErrSessionExpired):
			attempt = q.backoff(ctx, attempt) // the node, if any, died with the session
		default:
			return nil, fmt.Errorf("zklock: create in %s: %w", q.dir, err)
		}
	}
}

func (q *queue) backoff(ctx context.Context, attempt int) int {
	_ = q.s.cfg.retry.sleep(ctx, attempt)
	return attempt + 1
}

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
		e := &entry{dir: q.dir, name: c.name, sid: sid}
		stat, err := q.s.stat(ctx, e.node())
		switch {
		case errors.Is(err, zk.ErrNoNode):
		case err != nil:
			return nil, err
		case stat.EphemeralOwner == sid && found == nil:
			found = e
		default:
			q.s.cleaner.deleteNode(e.node(), stat.EphemeralOwner)
		}
	}
	return found, nil
}

// adopt moves the acquisition to p, the node of its own that the listing
// showed ahead of ours (see sameCreate), and deletes ours: the earlier node
// keeps our place in the queue, and its czxid, read here, is the token the
// hold will report. A node at p that another session owns is an older
// session's of ours, already expired: it is deleted and waited for like
// any node ahead, since a lagging server may list it until it has applied
// the expiry.
func (w *waiter) adopt(ctx context.Context, p string) woke {
	stat, err := w.q.s.stat(ctx, p)
	switch {
	case err != nil && ctx.Err() != nil:
		return wokeDone
	case errors.Is(err, zk.ErrNoNode):
		return wokeRelist
	case err != nil:
		w.attempt = w.q.backoff(ctx, w.attempt) // listing again reports or retries the error
		return wokeRelist
	case stat.EphemeralOwner != w.e.sid:
		w.q.s.cleaner.deleteNode(p, stat.EphemeralOwner)
		w.watch(p, false)
		return wokeRearm
	}
	if w.token != nil { // the token of the node we leave, adopted by find
		<-w.token
		w.token = nil
	}
	old := w.e
	w.e = &entry{dir: old.dir, name: path.Base(p), sid: old.sid, stat: stat}
	w.q.s.abandon(old.node(), old.sid)
	return wokeRelist
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
	return err
}
