package zklock

// Deciding after a listing: where our node stands in the queue by the
// recipe's rule, and what the wait does next (wait.go runs it).

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// move is what a step does after a listing.
type move uint8

const (
	moveHold       move = iota // return: our node holds, or the error ends the wait
	moveRelist                 // list again
	moveWatch                  // watch the node ahead
	moveJump                   // watch the node ahead, and hold once it goes
	moveWatchQueue             // watch the directory
	moveAdopt                  // adopt the node of our own acquisition ahead of ours (sameCreate)
)

// next lists e's directory and decides wait's next move; p is the node to
// watch.
func (q *queue) next(ctx context.Context, e *entry, attempt *int) (_ move, p string, _ error) {
	state, sid, _ := q.s.snapshot()
	switch {
	case state == StateClosed:
		return moveHold, "", ErrClosed
	case state == StateExpired || sid != e.sid:
		return moveHold, "", ErrSessionExpired
	}
	children, err := q.listing(ctx, e)
	if err != nil && ctx.Err() != nil {
		return moveHold, "", context.Cause(ctx)
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		if err := q.listFailed(ctx, e.dir, err, attempt); err != nil {
			return moveHold, "", err
		}
		return moveRelist, "", nil
	}
	cs := q.contenders(children)
	ours := indexOf(cs, e.name)
	if ours < 0 {
		if _, now, _ := q.s.snapshot(); now != e.sid {
			return moveHold, "", ErrSessionExpired
		}
		return moveHold, "", fmt.Errorf("%w: %s", ErrNodeGone, e.node())
	}
	if keep, drop := sameCreate(cs, ours); keep != ours || drop != nil {
		for _, i := range drop {
			if i != ours { // ours goes once the one ahead is adopted
				q.s.cleaner.deleteNode(e.dir+"/"+cs[i].name, e.sid)
			}
		}
		if keep != ours {
			return moveAdopt, e.dir + "/" + cs[keep].name, nil
		}
	}
	holds, w := q.decide(cs, ours)
	switch {
	case holds:
		return moveHold, "", nil
	case q.try:
		return moveHold, "", ErrLocked
	case w == watchQueue:
		return moveWatchQueue, "", nil
	case q.jump && (w == 0 && ours == 1 || negTrustWatch): // negTrustWatch: test-only (negative_off.go)
		return moveJump, e.dir + "/" + cs[w].name, nil
	}
	return moveWatch, e.dir + "/" + cs[w].name, nil
}

// watchQueue lists the directory with a children watch and reports whether
// our node holds by that listing; if not, it waits for the directory to
// change, for the session to change, or for ctx. One waiter at a time waits
// this way on a directory (a semaphore's leases are waited for under its
// internal lock), so the watch wakes no herd.
func (q *queue) watchQueue(ctx context.Context, e *entry) (bool, error) {
	_, _, changed := q.s.snapshot()
	children, ch, err := q.s.listWatch(ctx, e.dir)
	switch {
	case err != nil && ctx.Err() != nil:
		return false, context.Cause(ctx)
	case err != nil:
		return false, nil // listing again reports or retries the error
	}
	cs := q.contenders(children)
	if ours := indexOf(cs, e.name); ours >= 0 {
		if keep, _ := sameCreate(cs, ours); keep != ours {
			return false, nil // listing again adopts it (see next)
		}
		if holds, _ := q.decide(cs, ours); holds {
			return true, nil
		}
	}
	for {
		select {
		case <-ch:
			return false, nil
		case <-changed:
			var state State
			state, _, changed = q.s.snapshot()
			if state != StateSuspended {
				return false, nil // go-zookeeper re-arms the watch on reconnect; list again anyway
			}
		case <-ctx.Done():
			return false, context.Cause(ctx)
		}
	}
}

// jumped applies the jump rule once the watched node went, provided our
// session is still the one that created our node.
func (q *queue) jumped(e *entry, jump bool) bool {
	if !jump {
		return false
	}
	state, sid, _ := q.s.snapshot()
	return state != StateExpired && state != StateClosed && sid == e.sid
}
