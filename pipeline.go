package zklock

// Listing a queue's directory for wait, and the first listing of an
// acquisition pipelined behind its create.
//
// ZooKeeper executes one session's requests in the order the client sent
// them: a read queued behind a write of the same session is answered only
// after that write has been applied, and it sees it. So the getChildren an
// acquisition needs after its create can be sent as soon as the create
// request is on the wire, without waiting for the create's reply: the
// server answers it right behind the create, and the listing contains the
// new node. That saves one round trip per acquisition and sends no extra
// request.
//
// The listing is used only if the create it followed succeeded and the
// listing holds our node's exact name. Any listing that holds our node is a
// view of the directory taken after our node was created, which is all the
// first step of wait needs (a listing sent after the create's reply is no
// fresher in any way that matters: it may be stale by the time it is read
// too). Otherwise (the create failed or was retried, the listing failed or
// somehow overtook the create) it is discarded and wait lists as before.

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// pipelined is one getChildren of the queue's directory, sent once the
// create it follows has been written.
type pipelined struct {
	settled chan struct{} // closed once the create's outcome is known
	ok      bool          // written before settled is closed: the create succeeded
	res     chan listing  // receives exactly one listing
	taken   bool          // res has been received from (by the acquiring goroutine)
}

type listing struct {
	children []string
	err      error
}

var errNotListed = errors.New("zklock: pipelined listing not sent")

// pipeline starts the getChildren that follows the create whose request
// closes written. It never outlives ctx: the request is made with call.
// Its listing must be received with take (or discard), which the acquiring
// goroutine does before acquire returns.
func (q *queue) pipeline(ctx context.Context, written <-chan struct{}) *pipelined {
	p := &pipelined{settled: make(chan struct{}), res: make(chan listing, 1)}
	go func() {
		send := false
		select {
		case <-written:
			send = true
		case <-p.settled:
			// The outcome came first: the tap did not see the request, or
			// this goroutine ran late. A listing sent now is the listing
			// wait would send.
			send = p.ok
		case <-ctx.Done():
		}
		if !send {
			p.res <- listing{err: errNotListed}
			return
		}
		children, err := q.s.list(ctx, q.dir)
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

// firstListing returns the pipelined listing of e's create if wait can
// decide on it (once): the create succeeded (e.first is only set then), the
// request succeeded, and the listing holds our node.
func (q *queue) firstListing(e *entry) ([]string, bool) {
	if e.first == nil {
		return nil, false
	}
	l := e.first.take()
	e.first = nil // a waiting acquisition keeps nothing of its listing
	return l.children, l.err == nil && slices.Contains(l.children, e.name)
}

// listing lists e's directory for wait: the first time, usually, by
// taking the pipelined listing of e's create.
func (q *queue) listing(ctx context.Context, e *entry) ([]string, error) {
	if children, ok := q.firstListing(e); ok {
		return children, nil
	}
	if ctx.Err() != nil { // the pipelined listing ended with ctx: send no other
		return nil, context.Cause(ctx)
	}
	children, err := q.s.list(ctx, e.dir)
	return children, err
}

// listFailed handles a failed listing of dir: on a connection problem it
// backs off and returns nil (list again); otherwise it returns the error.
func (q *queue) listFailed(ctx context.Context, dir string, err error, attempt *int) error {
	if !isConnErr(err) {
		return fmt.Errorf("zklock: list %s: %w", dir, err)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	*attempt = q.backoff(ctx, *attempt)
	return nil
}
