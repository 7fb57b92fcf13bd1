package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"

	"github.com/zklock/zklock"
)

// acquireFunc takes a lock: it waits until the lock is held or ctx ends,
// or, with try, fails at once with zklock.ErrLocked if the lock is taken.
type acquireFunc func(ctx context.Context, try bool) (*zklock.Hold, error)

// endFunc ends what a recipe started: the hold its acquireFunc gave, or nil
// if none was taken (then only whatever else the recipe runs). nil stands
// for Hold.Release. A recipe whose holds belong to something else (a
// leader latch owns its terms' holds) gives its own.
type endFunc func(h *zklock.Hold) error

// recipe makes a holding verb's acquireFunc for the lock at path, and its
// endFunc (nil: Hold.Release). It should do no I/O: the session is
// connected, but acquiring is the caller's job.
type recipe func(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error)

// locker is the shape every lock recipe of the library shares.
type locker interface {
	Lock(ctx context.Context) (*zklock.Hold, error)
	TryLock(ctx context.Context) (*zklock.Hold, error)
}

// acquireOf adapts a recipe constructor's result, so a verb's recipe is one
// line: return acquireOf(zklock.NewMutex(s, path)).
func acquireOf[L locker](l L, err error) (acquireFunc, endFunc, error) {
	if err != nil {
		return nil, nil, err
	}
	return acquireWith(l.Lock, l.TryLock), nil, nil
}

// acquireWith is the acquireFunc that waits with wait, or with try makes
// one attempt with once.
func acquireWith(wait, once func(ctx context.Context) (*zklock.Hold, error)) acquireFunc {
	return func(ctx context.Context, try bool) (*zklock.Hold, error) {
		if try {
			return once(ctx)
		}
		return wait(ctx)
	}
}

func lockRecipe(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
	return acquireOf(zklock.NewMutex(s, path, o.lockOptions()...))
}

// endOrRelease is end, or Hold.Release for a nil end.
func endOrRelease(end endFunc) endFunc {
	if end != nil {
		return end
	}
	return func(h *zklock.Hold) error {
		if h == nil {
			return nil
		}
		return h.Release()
	}
}

// runHolding is every holding verb: connect, acquire, run CMD (or hold
// until a signal), release, close.
func (a *app) runHolding(inv *invocation) int {
	cfg := &inv.cfg
	var cmd *exec.Cmd
	if len(inv.cmd) > 0 {
		// Find CMD before taking the lock, so a typo does not queue for it.
		if _, err := exec.LookPath(inv.cmd[0]); err != nil {
			return a.cannotStart(err)
		}
		cmd = exec.Command(inv.cmd[0], inv.cmd[1:]...)
	}

	ictx, stop := a.interruptible(context.Background())
	defer stop()
	ctx := ictx
	if cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.timeout)
		defer cancel()
	}
	s, err := a.connect(ctx, cfg)
	if err != nil {
		stop() // from here on the signals are CMD's, if it runs unlocked
		if errors.Is(err, errUnreachable) {
			return a.unreachable(inv, cmd, err, signalled(ictx))
		}
		return a.notAcquired(inv, err)
	}
	acquire, end, err := inv.verb.recipe(s, inv.path, &inv.opts)
	if err != nil {
		s.Close()
		return a.fail(err)
	}
	end = endOrRelease(end)
	actx := ctx
	if cfg.try && cfg.timeout == 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, defaultConnectBound) // one attempt, still bounded
		defer cancel()
	}
	a.log.Info("zklock: acquiring", "path", inv.path, "try", cfg.try, "timeout", cfg.timeout)
	h, err := acquire(actx, cfg.try) // every request the library sends is bounded by actx
	stop()                           // from here on the signals are forwarded to CMD
	sig := signalled(ictx)
	if err != nil {
		a.release(s, nil, end)
		if errors.Is(err, zklock.ErrUnreachable) {
			return a.unreachable(inv, cmd, err, sig)
		}
		return a.notAcquired(inv, err)
	}
	if sig != nil { // the signal raced with the acquisition
		a.release(s, h, end)
		return a.notAcquired(inv, sig)
	}
	a.log.Info("zklock: acquired", "path", inv.path, "node", h.Node(), "token", h.Token())

	var code int
	if cmd == nil {
		code = a.holdUntilSignal(h)
	} else {
		code = a.runChild(inv, cmd, h)
	}
	a.release(s, h, end)
	return code
}

// signalled returns the signal that cancelled ctx, a context of
// interruptible, or nil if none did.
func signalled(ctx context.Context) *interrupted {
	var sig *interrupted
	if errors.As(context.Cause(ctx), &sig) {
		return sig
	}
	return nil
}

// notAcquired reports why the lock was not taken and returns 3 for a
// timeout, a taken lock under --try or a signal, 1 for errors.
func (a *app) notAcquired(inv *invocation, err error) int {
	var sig *interrupted
	switch {
	case errors.Is(err, zklock.ErrLocked):
		a.errorf("%s is held by another participant (--try): not acquired", inv.path)
		return exitNotAcquired
	case errors.Is(err, zklock.ErrTLSHandshake), errors.Is(err, zklock.ErrNotZooKeeper): // a configuration error, even if the wait also timed out
		a.errorf("%s not acquired: %v", inv.path, err)
		return exitError
	case errors.Is(err, context.DeadlineExceeded):
		bound := inv.cfg.timeout
		if bound == 0 {
			bound = defaultConnectBound
		}
		a.errorf("%s not acquired within %v", inv.path, bound)
		return exitNotAcquired
	case errors.As(err, &sig):
		a.errorf("%s not acquired: %v", inv.path, sig)
		return exitNotAcquired
	}
	a.errorf("%s: %v", inv.path, err)
	return exitCode(err)
}

// unreachable applies --on-unreachable when no server answered in time:
// "fail" exits 1 without running CMD; "run" runs CMD anyway, unlocked, with
// ZKLOCK_UNLOCKED=1 and no node or token, and exits with its status. With
// no CMD there is nothing to run, so both fail. The caller has stopped its
// signal watch, so that CMD gets every signal; sig, if not nil, is one the
// watch took as the bound expired: then nothing runs (exit 3).
func (a *app) unreachable(inv *invocation, cmd *exec.Cmd, err error, sig *interrupted) int {
	if sig != nil {
		return a.notAcquired(inv, sig)
	}
	if inv.cfg.onUnreachable != onUnreachableRun || cmd == nil {
		a.errorf("%v; CMD was not run", err)
		return exitError
	}
	a.errorf("warning: %v; running %s WITHOUT the lock (--on-unreachable run)", err, inv.cmd[0])
	return a.runChild(inv, cmd, nil)
}

// cannotStart reports a CMD that cannot be run (126) or found (127).
func (a *app) cannotStart(err error) int {
	a.errorf("%v", err)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return exitNotFound
	}
	return exitCannotExec
}

// holdUntilSignal is the no-CMD mode: print "NODE TOKEN", then hold until a
// signal (release, exit 0) or the loss of the lock (exit 4).
func (a *app) holdUntilSignal(h *zklock.Hold) int {
	if _, err := fmt.Fprintf(a.stdout, "%s %d\n", printable(h.Node()), h.Token()); err != nil {
		a.errorf("write stdout: %v", err)
		return exitError
	}
	select {
	case sig := <-a.signals:
		a.log.Info("zklock: releasing on signal", "signal", signalName(sig))
		return exitOK
	case <-h.Done():
		a.errorf("%s: %v", h.Node(), h.Err())
		return exitLost
	case <-h.Revoked(): // nil, never ready, unless --revocable
		a.errorf("%s: revocation requested: releasing", h.Node())
		return exitLost
	}
}

// release ends the hold with end (Hold.Release deletes its node) and
// closes the session; with a nil h (nothing was acquired) it closes the
// session first, then lets end stop what the recipe runs. Release blocks
// for at most one round trip, and not at all on a lost connection: then
// the node goes with the session.
func (a *app) release(s *zklock.Session, h *zklock.Hold, end endFunc) {
	if h == nil {
		s.Close() // nothing to delete; whatever the recipe runs stops with the session
	}
	err := end(h)
	switch {
	case h == nil:
	case err == nil:
		a.log.Info("zklock: released", "node", h.Node())
	case errors.Is(err, zklock.ErrLost):
		// Reported already; the node, if any, goes with the session.
	default:
		a.errorf("release %s: %v (the node goes when the session ends)", h.Node(), err)
	}
	s.Close()
}
