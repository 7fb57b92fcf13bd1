package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"time"

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
// until a signal), release, close. With --requeue (elect), once a term is
// over it campaigns again on the same session, after a backoff (requeue.go).
func (a *app) runHolding(inv *invocation) int {
	cfg := &inv.cfg
	if len(inv.cmd) > 0 {
		// Find CMD before taking the lock, so a typo does not queue for it.
		if _, err := exec.LookPath(inv.cmd[0]); err != nil {
			return a.cannotStart(err)
		}
	}

	if inv.opts.revocable && inv.opts.nodeData() != "" {
		a.log.Warn("--id and --data are ignored with --revocable: a revocable node's data is empty, as Curator's", "path", inv.path)
	}
	a.mon = newMonitor(inv.path, cfg)
	inv.opts.owner = a.ownerID()
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
			return a.unreachable(inv, a.command(inv), err, signalled(ictx))
		}
		return a.notAcquired(inv, err)
	}
	a.mon.session = s
	srv, err := a.serveHTTP(inv)
	if err != nil {
		stop()
		s.Close()
		return a.fail(err)
	}
	defer srv.stop()

	t := a.term(inv, s, ictx, ctx, stop)
	if inv.opts.requeue || inv.opts.health.check != nil {
		t = a.requeue(inv, s, t)
	}
	s.Close()
	return t.code
}

// command is a fresh exec.Cmd of CMD (one can start only once), or nil
// for none.
func (a *app) command(inv *invocation) *exec.Cmd {
	if len(inv.cmd) == 0 {
		return nil
	}
	return exec.Command(inv.cmd[0], inv.cmd[1:]...)
}

// termEnd is how a term ended: the exit status, whether the lock was held
// (led), for how long, and whether a signal ended it.
type termEnd struct {
	code      int
	led       bool
	held      time.Duration
	signalled bool
	unhealthy bool // --health-cmd ended it
}

// term acquires the lock on s within ctx (ictx is its signal watch, ended
// by stop), runs CMD or holds until a signal, and releases. A term that
// did not acquire closes s; one that did leaves it open for the caller.
func (a *app) term(inv *invocation, s *zklock.Session, ictx, ctx context.Context, stop func()) termEnd {
	cfg := &inv.cfg
	acquire, end, err := inv.verb.recipe(s, inv.path, &inv.opts)
	if err != nil {
		stop()
		s.Close()
		return termEnd{code: a.fail(err)}
	}
	end = endOrRelease(end)
	actx := ctx
	if cfg.try && cfg.timeout == 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, defaultConnectBound) // one attempt, still bounded
		defer cancel()
	}
	a.log.Info("acquiring", "path", inv.path, "try", cfg.try, "timeout", cfg.timeout)
	h, err := acquire(actx, cfg.try) // every request the library sends is bounded by actx
	stop()                           // from here on the signals are forwarded to CMD
	sig := signalled(ictx)
	if err != nil {
		a.release(s, nil, end)
		if errors.Is(err, zklock.ErrUnreachable) {
			return termEnd{code: a.unreachable(inv, a.command(inv), err, sig), signalled: sig != nil}
		}
		return termEnd{code: a.notAcquired(inv, err), signalled: sig != nil}
	}
	if sig != nil { // the signal raced with the acquisition
		a.release(s, h, end)
		return termEnd{code: a.notAcquired(inv, sig), signalled: true}
	}
	start := time.Now()
	a.mon.held(h)
	a.log.Info("acquired", holdAttrs(inv.path, h)...)

	a.signalled, a.resigned = false, false
	resign, stopHealth := a.watchHealth(inv.opts.health.check, h)
	a.resign = resign
	var code int
	if cmd := a.command(inv); cmd == nil {
		code = a.holdUntilSignal(inv, h)
	} else {
		code = a.runChild(inv, cmd, h)
	}
	stopHealth()
	a.resign = nil
	a.mon.held(nil)
	a.release(s, h, end)
	return termEnd{code: code, led: true, held: time.Since(start), signalled: a.signalled, unhealthy: a.resigned}
}

// holdAttrs are the log attributes of a hold.
func holdAttrs(path string, h *zklock.Hold) []any {
	return []any{"path", path, "node", printable(h.Node()), "token", h.Token(), "session", sessionHex(h.SessionID())}
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

// notAcquired reports why the lock was not taken and returns
// --conflict-exit-code (3) for a timeout, a taken lock under --try or a
// signal, 1 for errors.
func (a *app) notAcquired(inv *invocation, err error) int {
	var sig *interrupted
	switch {
	case errors.Is(err, zklock.ErrLocked):
		return a.outcome(exitNotAcquired, "%s is held by another participant (--try): not acquired", inv.path)
	case errors.Is(err, zklock.ErrTLSHandshake), errors.Is(err, zklock.ErrNotZooKeeper): // a configuration error, even if the wait also timed out
		return a.outcome(exitError, "%s not acquired: %v", inv.path, err)
	case errors.Is(err, context.DeadlineExceeded):
		bound := inv.cfg.timeout
		if bound == 0 {
			bound = defaultConnectBound
		}
		return a.outcome(exitNotAcquired, "%s not acquired within %v", inv.path, bound)
	case errors.As(err, &sig):
		return a.outcome(exitNotAcquired, "%s not acquired: %v", inv.path, sig)
	}
	return a.outcome(exitCode(err), "%s: %v", inv.path, err)
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
		return a.outcome(exitError, "%v; CMD was not run", err)
	}
	a.log.Warn(message("%v; running %s WITHOUT the lock (--on-unreachable run)", err, inv.cmd[0]), "path", inv.path)
	return a.runChild(inv, cmd, nil)
}

// cannotStart reports a CMD that cannot be run (126) or found (127).
func (a *app) cannotStart(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return a.outcome(exitNotFound, "%v", err)
	}
	return a.outcome(exitCannotExec, "%v", err)
}

// holdUntilSignal is the no-CMD mode: print "NODE TOKEN", then hold until a
// signal (release, exit 0) or the loss of the lock (--lost-exit-code, 4).
func (a *app) holdUntilSignal(inv *invocation, h *zklock.Hold) int {
	if _, err := fmt.Fprintf(a.stdout, "%s %d\n", printable(h.Node()), h.Token()); err != nil {
		return a.outcome(exitError, "write stdout: %v", err)
	}
	select {
	case sig := <-a.signals:
		a.signalled = true
		a.log.Info("releasing on signal", "signal", signalName(sig), "path", inv.path, "outcome", outcomeReleased, "exit_code", exitOK)
		return exitOK
	case <-h.Done():
		return a.lost(inv, h, h.Err())
	case <-h.Revoked(): // nil, never ready, unless --revocable
		return a.lost(inv, h, errRevocationRequested)
	case err := <-a.resign: // nil, never ready, without --health-cmd
		a.resigned = true
		return a.lost(inv, h, fmt.Errorf("%w: %w", errUnhealthy, err))
	}
}

// errRevocationRequested ends a revocable hold as a loss does.
var errRevocationRequested = errors.New("revocation requested: releasing")

// lost reports the loss of h (or a revocation) and returns --lost-exit-code.
func (a *app) lost(inv *invocation, h *zklock.Hold, cause error) int {
	st := a.status(exitLost)
	a.log.Error(message("%s: %v", printable(h.Node()), cause), append(holdAttrs(inv.path, h), "outcome", outcomeLost, "exit_code", st)...)
	return st
}

// release ends the hold with end (Hold.Release deletes its node) and
// leaves the session open (a --requeue campaigns again on it); with a nil
// h (nothing was acquired) it closes the session first, then lets end stop
// what the recipe runs. Release blocks for at most one round trip, and not
// at all on a lost connection: then the node goes with the session.
func (a *app) release(s *zklock.Session, h *zklock.Hold, end endFunc) {
	if h == nil {
		s.Close() // nothing to delete; whatever the recipe runs stops with the session
	}
	err := end(h)
	switch {
	case h == nil:
	case err == nil:
		a.log.Info("released", "node", printable(h.Node()), "token", h.Token())
	case errors.Is(err, zklock.ErrLost):
		// Reported already; the node, if any, goes with the session.
	default:
		a.log.Warn(message("release %s: %v (the node goes when the session ends)", printable(h.Node()), err), "node", printable(h.Node()))
	}
}

// lockOptions are the library options that a holding verb's flags ask for.
func (o *verbOpts) lockOptions() []zklock.Option {
	opts := o.aclOptions()
	if d := o.nodeData(); d != "" {
		opts = append(opts, zklock.WithData([]byte(d)))
	}
	if o.revocable {
		opts = append(opts, zklock.WithRevocable())
	}
	if o.owner != "" {
		opts = append(opts, zklock.WithOwner(o.owner))
	}
	return opts
}
