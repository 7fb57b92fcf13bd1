package zklock

// Creating our node the way Curator's protected mode does, with the first
// listing of the queue pipelined behind the create and the node's fencing
// token read off the create's reply. See docs/protocol.md#protected-mode-creates-and-lost-replies.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/go-zookeeper/zk"
)

// create makes our ephemeral sequential node with Curator's protected name
// and returns it with the listing pipelined behind it. After a connection
// error it searches for our prefix (find) before creating again; a node
// handed to the cleaner is never adopted (the next attempt gets a new
// prefix). Once an attempt may have made a node in a session, create fails
// with ErrSessionExpired when that session is gone.
func (q *queue) create(ctx context.Context) (*entry, *pipelined, error) {
	prefix := protectedPrefix()
	ambiguous := false
	var queued int64 // the session the first attempt that may have made a node was written in
	for attempt := 0; ; {
		state, sid, changed := q.s.snapshot()
		if state == StateClosed { // go-zookeeper would answer ErrConnectionClosed, retried until ctx ends
			return nil, nil, ErrClosed
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
			// Our node may have been queued, and seen, in a session that
			// has expired since: end as a waiter does.
			return nil, nil, ErrSessionExpired
		}
		if ctx.Err() != nil {
			if ambiguous {
				q.s.cleaner.findAndDelete(q.dir, prefix, sid)
			}
			return nil, nil, context.Cause(ctx)
		}
		if ambiguous {
			e, err := q.find(ctx, prefix, sid)
			if r := refused(err, accessList, q.dir, "looking for our node after a lost reply"); r != nil {
				q.s.cleaner.findAndDelete(q.dir, prefix, sid)
				return nil, nil, r
			}
			if err != nil {
				attempt = q.s.cfg.retry.wait(ctx, attempt)
				continue
			}
			if e != nil {
				return e, nil, nil
			}
			ambiguous = false
		}
		name, flags := q.dir+"/"+prefix+q.mark, int32(zk.FlagEphemeral|zk.FlagSequence)
		if q.fixed != "" {
			name, flags = name+q.fixed, zk.FlagEphemeral
		}
		written := q.s.creates.expect(name) // the reply's zxid is the node's czxid
		first := q.s.pipeline(ctx, q.dir, written)
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
		czxid, known, in, sent := q.s.creates.done(name)
		if sent && queued == 0 && (err == nil || isConnErr(err)) {
			queued = in
		}
		_, now, _ := q.s.snapshot()
		if err == nil && now == sid {
			first.settle(true)
			e := newEntry(q.dir, path.Base(p), sid, nil)
			if known {
				e.stat = &zk.Stat{Czxid: czxid, EphemeralOwner: sid}
			}
			return e, first, nil
		}
		first.discard()
		switch {
		case err != nil && ctx.Err() != nil:
			// The outcome may be unknown; a create still in flight is
			// also handled by its late handler.
			q.s.cleaner.findAndDelete(q.dir, prefix, sid)
			return nil, nil, context.Cause(ctx)
		case err == nil:
			// Made under a session we did not see it under: delete it, and
			// name the next attempt afresh, so no search adopts it.
			q.s.cleaner.deleteNode(p, now)
			prefix = protectedPrefix()
			continue
		case errors.Is(err, zk.ErrNoNode):
			if err := q.mkdirs(ctx, q.dir); err != nil && !isConnErr(err) && ctx.Err() == nil {
				return nil, nil, fmt.Errorf("zklock: create parents of %s: %w", q.dir, err)
			}
		case isConnErr(err):
			ambiguous = true
			attempt = q.s.cfg.retry.wait(ctx, attempt)
		case errors.Is(err, zk.ErrSessionExpired):
			attempt = q.s.cfg.retry.wait(ctx, attempt) // the node, if any, died with the session
		case permanent(err):
			return nil, nil, refused(err, accessCreate, q.dir, "the lock directory")
		default:
			return nil, nil, fmt.Errorf("zklock: create in %s: %w", q.dir, err)
		}
	}
}

// newEntry returns the entry of our node name in dir, created by session sid.
func newEntry(dir, name string, sid int64, stat *zk.Stat) *entry {
	return &entry{dir: dir, name: name, node: dir + "/" + name, sid: sid, stat: stat}
}

// protectedPrefix returns Curator's protected-mode prefix, "_c_" + a fresh
// random lowercase dashed UUID + "-", 40 characters.
func protectedPrefix() string {
	var b [16]byte
	_, _ = rand.Read(b[:])  // never fails: crypto/rand crashes the program rather than return an error
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b[:])
	return "_c_" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32] + "-"
}

// pipelined is one getChildren of the queue's directory, sent as soon as
// the create it follows is on the wire: ZooKeeper answers a session's
// requests in order, so it holds the new node and saves a round trip.
type pipelined struct {
	settled chan struct{} // closed once the create's outcome is known
	ok      bool          // written before settled is closed: the create succeeded
	res     chan listing  // receives exactly one listing
	taken   bool          // res has been received from
}

type listing struct {
	children []string
	err      error
}

var errNotListed = errors.New("zklock: pipelined listing not sent")

// pipeline starts the getChildren of dir that follows the create whose
// request closes written. It never outlives ctx. Its listing must be
// received with take (or discard) before the acquire returns.
func (s *Session) pipeline(ctx context.Context, dir string, written <-chan struct{}) *pipelined {
	p := &pipelined{settled: make(chan struct{}), res: make(chan listing, 1)}
	go func() {
		send := false
		select {
		case <-written:
			send = true
		case <-p.settled:
			// The outcome came first: the tap did not see the request, or
			// this goroutine ran late. A listing sent now is the one the
			// wait would send.
			send = p.ok
		case <-ctx.Done():
		}
		if !send {
			p.res <- listing{err: errNotListed}
			return
		}
		children, err := s.list(ctx, dir)
		p.res <- listing{children, err}
	}()
	return p
}

// settle records the create's outcome.
func (p *pipelined) settle(ok bool) {
	if p != nil {
		p.ok = ok
		close(p.settled)
	}
}

// take waits for the listing (at most until ctx ends) and returns it, once.
func (p *pipelined) take() listing {
	if p == nil || p.taken {
		return listing{err: errNotListed}
	}
	p.taken = true
	return <-p.res
}

// discard settles a listing whose create failed and waits for it to end.
func (p *pipelined) discard() {
	if p != nil {
		p.settle(false)
		p.take()
	}
}

// listingOf takes the listing and reports whether the wait can decide on
// it: the request succeeded and the listing holds our node, name.
func (p *pipelined) listingOf(name string) ([]string, bool) {
	l := p.take()
	return l.children, l.err == nil && slices.Contains(l.children, name)
}
