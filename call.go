package zklock

import (
	"context"
	"sync"
	"time"
)

// call runs one ZooKeeper request and returns when it completes or ctx
// ends, whichever comes first. go-zookeeper's requests take no context: one
// queued on a dead connection waits for the client's own timeouts (up to
// ten receive timeouts during a handshake), so the library never blocks on
// one past its caller's context. An abandoned request still completes in
// the background; if late is not nil it is given the result then, so that a
// node created after its caller gave up can be deleted.
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

// quitContext adapts a quit channel to a context for Backoff.sleep.
type quitContext struct{ quit <-chan struct{} }

func (q quitContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (q quitContext) Done() <-chan struct{}       { return q.quit }
func (q quitContext) Value(any) any               { return nil }
func (q quitContext) Err() error {
	select {
	case <-q.quit:
		return context.Canceled
	default:
		return nil
	}
}
