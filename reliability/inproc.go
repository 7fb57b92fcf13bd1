package reliability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock"
)

// inproc is an in-process contender: its own Session, logging to the
// scenario's history with the same events as a worker.
type inproc struct {
	e    *Env
	name string
	s    *zklock.Session
	m    *zklock.Mutex
	eras bool // log each hold's ensemble era on its ok event (S25)
}

func (e *Env) contender(name string) *inproc {
	// Its session's states are logged as a worker's are: C4 tells by them
	// whose session a fault expired.
	observe := zklock.WithObserver(func(ev zklock.Event) {
		if ev.Kind == zklock.EventState {
			e.Nem.Add(Event{Kind: KindState, Worker: name, Client: 1, Session: ev.Session, Name: ev.State.String()})
		}
	})
	s, err := zklock.Connect(e.C.Servers(), zklock.WithSessionTimeout(e.Sc.Session), zklock.WithDialer(e.C.Dialer()), observe)
	if err != nil {
		e.T.Fatalf("connect: %v", err)
	}
	e.T.Cleanup(func() { s.Close() })
	m, err := zklock.NewMutex(s, LockPath(e.Root, 0))
	if err != nil {
		e.T.Fatalf("mutex: %v", err)
	}
	return &inproc{e: e, name: name, s: s, m: m}
}

func (c *inproc) ev(kind string, op int64) Event {
	return Event{Kind: kind, Worker: c.name, Client: 1, Op: op, Lock: c.m.Path()}
}

// lock calls Lock with the events a worker logs; the hold's loss is logged
// by a goroutine. A Lock that fails because ctx ended is logged as a
// worker's is, "stopped: ...": the run is over, which is no liveness failure.
func (c *inproc) lock(ctx context.Context, op int64) (*zklock.Hold, error) {
	c.e.Nem.Add(c.ev(KindInvoke, op))
	h, err := c.m.Lock(ctx)
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("stopped: %w", err)
	}
	c.done(op, h, err)
	return h, err
}

func (c *inproc) done(op int64, h *zklock.Hold, err error) {
	if err != nil {
		e := c.ev(KindFail, op)
		e.Err = err.Error()
		c.e.Nem.Add(e)
		return
	}
	e := c.ev(KindOK, op)
	e.Session, e.Node, e.Token = h.SessionID(), h.Node(), h.Token()
	if c.eras {
		ctx, cancel := context.WithTimeout(context.Background(), c.e.Sc.Session)
		era, err := h.Era(ctx)
		cancel()
		e.Era = era
		if err != nil {
			e.Err = err.Error()
		}
	}
	c.e.Nem.Add(e)
	if ok, st, err := c.s.Conn().Exists(h.Node()); err == nil {
		e := c.ev(KindStat, op)
		e.Node, e.Token, e.OK = h.Node(), h.Token(), ok
		if ok {
			e.Czxid, e.Owner = st.Czxid, st.EphemeralOwner
		}
		c.e.Nem.Add(e)
	}
	go func() {
		<-h.Done()
		if err := h.Err(); errors.Is(err, zklock.ErrLost) {
			e := c.ev(KindLoss, op)
			e.Err = err.Error()
			c.e.Nem.Add(e)
		}
	}()
}

func (c *inproc) release(op int64, h *zklock.Hold) {
	c.e.Nem.Add(c.ev(KindRelease, op))
	h.Release()
}

// children waits until the lock has n children (or 5 s pass).
func (e *Env) children(n int) bool {
	p := LockPath(e.Root, 0)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		cs, _, err := e.Conn.Children(p)
		if errors.Is(err, zk.ErrNoNode) {
			cs, err = nil, nil
		}
		if err == nil && len(cs) == n {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func (e *Env) contract(name string, ok bool, format string, args ...any) {
	ev := Event{Kind: KindContract, Name: name, OK: ok}
	if !ok {
		ev.Err = fmt.Sprintf(format, args...)
	}
	e.Nem.Add(ev)
}

type lockResult struct {
	h   *zklock.Hold
	err error
}

// PredecessorVanishes is S9: A holds, B waits on A, C waits on B; B's
// session is expired on the server. C must re-list and keep waiting for A
// (etcd TestMutexWaitsOnCurrentHolder, CURATOR-527): a C that trusts the
// deletion of its predecessor acquires while A holds, which C1 reports.
func PredecessorVanishes(iters int) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		a, b, c := e.contender("A"), e.contender("B"), e.contender("C")
		for op := int64(1); op <= int64(iters) && ctx.Err() == nil; op++ {
			ha, err := a.lock(ctx, op)
			if err != nil {
				continue
			}
			bres, cres := make(chan lockResult, 1), make(chan lockResult, 1)
			e.Nem.Add(b.ev(KindInvoke, op))
			go func() { h, err := b.m.Lock(ctx); bres <- lockResult{h, err} }()
			if !e.children(2) {
				e.contract("S9-setup", false, "B did not queue")
			}
			e.Nem.Add(c.ev(KindInvoke, op))
			go func() { h, err := c.m.Lock(ctx); cres <- lockResult{h, err} }()
			if !e.children(3) {
				e.contract("S9-setup", false, "C did not queue")
			}
			sid := b.s.ID()
			e.Fault(FaultExpire, fmt.Sprintf("%#x", sid), 0, func() error { return e.C.Expire(sid) }, nil)
			r := <-bres
			b.done(op, r.h, r.err)
			if r.err == nil {
				b.release(op, r.h)
			}
			var cr *lockResult
			select { // give a C that wrongly jumps the time to do it
			case x := <-cres:
				cr = &x
				c.done(op, x.h, x.err)
			case <-time.After(300 * time.Millisecond):
			}
			a.release(op, ha)
			if cr == nil {
				x := <-cres
				cr = &x
				c.done(op, x.h, x.err)
			}
			if cr.err == nil {
				c.release(op, cr.h)
			}
		}
	}
}

// ParentLifecycle is S14: the lock is emptied until the server reaps its
// CONTAINER parent, then taken again. The sequence restarts at 0000000000
// while the token (czxid) keeps increasing (C3 over the acquisitions).
func ParentLifecycle(iters int) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		c := e.contender("P")
		p := c.m.Path()
		for op := int64(1); op <= int64(iters) && ctx.Err() == nil; op++ {
			h, err := c.lock(ctx, op)
			if err != nil {
				continue
			}
			if op > 1 {
				e.contract("S14-sequence-restarts", strings.HasSuffix(h.Node(), "-lock-0000000000"),
					"after the parent was reaped the node is %s", h.Node())
			}
			c.release(op, h)
			reaped := false
			e.Fault(FaultReapParent, p, 0, func() error {
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					if ok, _, err := e.Conn.Exists(p); err == nil && !ok {
						reaped = true
						return nil
					}
					time.Sleep(20 * time.Millisecond)
				}
				return nil
			}, nil)
			e.contract("S14-container-reaped", reaped, "%s not reaped within 5s", p)
		}
	}
}

// Contracts is S16: reentrancy and the API's promises (C7).
func Contracts(ctx context.Context, e *Env) {
	a, b := e.contender("A"), e.contender("B")
	h1, err := a.lock(ctx, 1)
	if err != nil {
		e.contract("lock", false, "%v", err)
		return
	}
	h2, err2 := a.m.Lock(h1.Context())
	h3, err3 := a.m.Lock(h2.Context())
	e.contract("reentrant-3-levels", err2 == nil && err3 == nil && h2.Token() == h1.Token() && h3.Node() == h1.Node(),
		"nested locks: %v %v", err2, err3)
	if err2 == nil && err3 == nil {
		h3.Release()
		h2.Release()
		ok, _, _ := e.Conn.Exists(h1.Node())
		e.contract("reentrant-node-kept", ok, "node deleted before the last release")
	}
	// Cancel while waiting: no node left behind.
	cctx, cancel := context.WithCancel(ctx)
	res := make(chan error, 1)
	go func() { _, err := b.m.Lock(cctx); res <- err }()
	queued := e.children(2)
	cancel()
	err = <-res
	e.contract("cancel-while-waiting", queued && errors.Is(err, context.Canceled), "queued=%v err=%v", queued, err)
	e.contract("cancel-leaves-no-node", e.children(1), "a cancelled Lock left its node")
	// Timeout while waiting.
	tctx, tcancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = b.m.Lock(tctx)
	tcancel()
	e.contract("timeout", errors.Is(err, context.DeadlineExceeded), "err=%v", err)
	e.contract("timeout-leaves-no-node", e.children(1), "a timed-out Lock left its node")
	// TryLock on a held lock writes nothing.
	_, err = b.m.TryLock(ctx)
	e.contract("trylock-held", errors.Is(err, zklock.ErrLocked), "err=%v", err)
	e.contract("trylock-writes-nothing", e.children(1), "TryLock left a node")
	// Bad input: a clear error, no panic.
	//lint:ignore SA1012 testing the nil-context contract
	_, err = b.m.Lock(nil) //nolint:staticcheck
	e.contract("nil-context", errors.Is(err, zklock.ErrInvalidArgument), "err=%v", err)
	a.release(1, h1)
	e.contract("last-release-deletes", e.children(0), "node left after the last release")
	err = h1.Release()
	e.contract("double-release", errors.Is(err, zklock.ErrNotHeld), "second Release: %v", err)
	// A closed session refuses.
	b.s.Close()
	cctx2, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	_, err = b.m.Lock(cctx2)
	cancel2()
	e.contract("closed-session", errors.Is(err, zklock.ErrClosed), "err=%v", err)
}

// StaleOwnNode is S10: the holder's session is expired on the server and the
// holder locks again at once. The old hold must end with a loss signal, and
// every new hold's node must be owned by the session that holds it (C3
// compares the ephemeralOwner the holder reads with its session; CURATOR-604,
// 206, 696). A contender B keeps the lock busy so that stale state matters.
func StaleOwnNode(iters int) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		a, b := e.contender("A"), e.contender("B")
		var op int64
		for it := 0; it < iters && ctx.Err() == nil; it++ {
			op++
			h, err := a.lock(ctx, op)
			if err != nil {
				continue
			}
			bres := make(chan lockResult, 1)
			bop := op
			e.Nem.Add(b.ev(KindInvoke, bop))
			go func() { h, err := b.m.Lock(ctx); bres <- lockResult{h, err} }()
			e.children(2)
			sid := a.s.ID()
			e.Fault(FaultExpire, fmt.Sprintf("%#x", sid), 0, func() error { return e.C.Expire(sid) }, nil)
			select {
			case <-h.Done():
				e.contract("S10-expired-holder-told", errors.Is(h.Err(), zklock.ErrLost), "hold ended with %v", h.Err())
			case <-time.After(e.Sc.Session + 5*time.Second):
				e.contract("S10-expired-holder-told", false, "no loss signal %v after the expiry", e.Sc.Session+5*time.Second)
			}
			a.release(op, h)
			op++
			ares := make(chan lockResult, 1)
			aop := op
			go func() { h, err := a.lock(ctx, aop); ares <- lockResult{h, err} }() // at once: queues behind B
			r := <-bres
			b.done(bop, r.h, r.err)
			if r.err == nil {
				b.release(bop, r.h)
			}
			if x := <-ares; x.err == nil {
				a.release(aop, x.h)
			}
		}
	}
}
