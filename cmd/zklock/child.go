package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

// The variables added to the child's environment (cli.md).
const (
	envPath     = "ZKLOCK_PATH"
	envNode     = "ZKLOCK_NODE"
	envToken    = "ZKLOCK_FENCING_TOKEN"
	envEra      = "ZKLOCK_FENCING_ERA"
	envUnlocked = "ZKLOCK_UNLOCKED"
	envNS       = "ZKLOCK_NAMESPACE" // also read as --namespace's variable
	envAuth     = "ZKLOCK_AUTH"      // read as --auth's variable, never passed on
)

// childEnv is base without any inherited lock variables (a zklock run inside
// another must not pass on its parent's) nor the credentials of ZKLOCK_AUTH,
// plus this hold's. ZKLOCK_PATH and
// ZKLOCK_NODE are relative to the namespace ns, which is passed on as
// ZKLOCK_NAMESPACE (and unset without one), so that a zklock run by CMD
// names the same znodes with the same paths. ZKLOCK_FENCING_ERA is era, the
// ensemble's (unset if "": it could not be read).
func childEnv(base []string, ns, path, node string, token int64, era string) []string {
	env := make([]string, 0, len(base)+5)
	for _, kv := range base {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case envPath, envNode, envToken, envEra, envUnlocked, envNS, envAuth:
			continue
		}
		env = append(env, kv)
	}
	if ns != "" {
		env = append(env, envNS+"="+ns)
	}
	if node == "" { // --on-unreachable run: no lock, no node, no token
		return append(env, envPath+"="+path, envUnlocked+"=1")
	}
	env = append(env,
		envPath+"="+path,
		envNode+"="+node,
		envToken+"="+strconv.FormatInt(token, 10))
	if era != "" {
		env = append(env, envEra+"="+era)
	}
	return env
}

// holdEra returns h's ensemble era for the child, or "" (logged) if it
// cannot be read within the connect bound: the child's era-checked writes
// are then refused, never let through.
func (a *app) holdEra(inv *invocation, h *zklock.Hold) string {
	ctx, cancel := context.WithTimeout(context.Background(), inv.cfg.connectBound())
	defer cancel()
	era, err := h.Era(ctx)
	if err != nil {
		a.log.Info("no fencing era for the child", "err", err)
	}
	return era
}

// runChild runs CMD while h is held and returns zklock's exit status: the
// child's (128+S if a signal S killed it), or 4 if the lock was lost while
// it ran. Signals sent to zklock are forwarded. On loss the child gets
// SIGTERM, then SIGKILL after --kill-grace. On Linux CMD runs under a
// supervisor (supervise_linux.go) that kills it, and all it started, if
// zklock dies.
func (a *app) runChild(inv *invocation, cmd *exec.Cmd, h *zklock.Hold) int {
	var (
		node, era string
		token     int64
		done      <-chan struct{} // nil, never ready, when running unlocked (h == nil)
		revoc     <-chan struct{} // nil, never ready, unless --revocable
	)
	if h != nil {
		node, token, done, revoc = h.Node(), h.Token(), h.Done(), h.Revoked()
		era = a.holdEra(inv, h)
	}
	cmd.Env = childEnv(a.environ, inv.cfg.namespace, inv.path, node, token, era)
	if inv.opts.owner != "" {
		cmd.Env = append(cmd.Env, envOwner+"="+inv.opts.owner) // nested zklocks are this owner (deadlock.go)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = a.stdin, a.stdout, a.stderr
	c, err := startChild(cmd, !isTerminal(a.stdin))
	if err != nil {
		return a.cannotStart(err)
	}
	defer c.close()
	a.log.Info("started", "pid", c.cmd.Process.Pid, "supervised", c.ctrl != nil, "cmd", inv.cmd[0], "path", inv.path)

	waitc := make(chan error, 1)
	go func() { waitc <- c.cmd.Wait() }()
	var (
		lost   bool
		killed bool
		killc  <-chan time.Time
	)
	for {
		select {
		case sig := <-a.signals:
			a.signalled = true
			a.log.Info("forwarding signal", "signal", signalName(sig), "pid", c.cmd.Process.Pid)
			c.signal(sig)
		case <-done:
			done = nil
			lost = true
			a.log.Error(message("%s: %v while %s ran; sending it SIGTERM, SIGKILL after %v",
				printable(h.Node()), h.Err(), inv.cmd[0], inv.cfg.killGrace), holdAttrs(inv.path, h)...)
			c.signal(syscall.SIGTERM)
			t := time.NewTimer(inv.cfg.killGrace)
			defer t.Stop()
			killc = t.C
		case <-revoc: // ended as a loss is, and reported as one (exit 4)
			revoc, done = nil, nil
			lost = true
			a.log.Error(message("%s: revocation requested while %s ran; sending it SIGTERM, SIGKILL after %v",
				printable(h.Node()), inv.cmd[0], inv.cfg.killGrace), holdAttrs(inv.path, h)...)
			c.signal(syscall.SIGTERM)
			t := time.NewTimer(inv.cfg.killGrace)
			defer t.Stop()
			killc = t.C
		case err := <-a.resign: // nil, never ready, without --health-cmd: ended as a loss is
			a.resign, revoc, done = nil, nil, nil
			lost, a.resigned = true, true
			a.log.Error(message("%s: %v: %v; sending %s SIGTERM, SIGKILL after %v",
				printable(h.Node()), errUnhealthy, err, inv.cmd[0], inv.cfg.killGrace), holdAttrs(inv.path, h)...)
			c.signal(syscall.SIGTERM)
			t := time.NewTimer(inv.cfg.killGrace)
			defer t.Stop()
			killc = t.C
		case <-killc:
			killc = nil
			killed = true
			a.log.Warn("killing the child", "signal", "SIGKILL", "pid", c.cmd.Process.Pid)
			c.signal(syscall.SIGKILL)
		case err := <-waitc:
			c.exited = true
			if killed || (c.ctrl != nil && killedBySignal(c.cmd.ProcessState)) {
				// What is left of CMD's group, if the supervisor was killed
				// (CMD died with it: its Pdeathsig) or CMD ended before the
				// supervisor acted on SIGKILL.
				c.direct(syscall.SIGKILL)
			}
			code, ok := childStatus(c.cmd.ProcessState)
			if !ok {
				a.log.Error(message("wait for %s: %v", inv.cmd[0], err))
				code = exitError
			}
			if !lost && h != nil && isLost(h) { // lost just as the child exited: its work was not covered
				lost = true
				a.log.Error(message("%s: %v while %s ran", printable(h.Node()), h.Err(), inv.cmd[0]), holdAttrs(inv.path, h)...)
			}
			if !lost {
				a.childExited(inv, code)
				return code
			}
			if killc != nil && !killed && c.groupAlive() {
				// The child is gone but others in its group outlive it:
				// they get the rest of the grace, then SIGKILL.
				<-killc
				c.signal(syscall.SIGKILL)
			}
			st := a.status(exitLost)
			a.log.Error("lock lost while CMD ran", "path", inv.path, "cmd", inv.cmd[0], "cmd_status", code, "outcome", outcomeLost, "exit_code", st)
			return st
		}
	}
}

// childExited logs CMD's own status, which is zklock's: at Info level, or
// as a warning when it is also one of zklock's own statuses, which only
// the log (outcome "child") then tells apart.
func (a *app) childExited(inv *invocation, code int) {
	attrs := []any{"path", inv.path, "cmd", inv.cmd[0], "outcome", outcomeChild, "exit_code", code}
	switch code {
	case exitOK:
	case a.conflictExit, a.lostExit:
		a.log.Warn(fmt.Sprintf("CMD exited with %d, which is also zklock's status for not acquired or lost: this one is CMD's", code), attrs...)
		return
	}
	a.log.Info("child exited", attrs...)
}

func isLost(h *zklock.Hold) bool { return errors.Is(h.Err(), zklock.ErrLost) }

// supervisorName is argv[0] of CMD's supervisor: zklock run again, on
// Linux, to stand between zklock and CMD (supervise_linux.go).
const supervisorName = "zklock-supervise"

// child is a started CMD, signalled as a process group (so its own children
// stop too when the lock is lost) unless it shares zklock's terminal. On
// Linux, cmd is CMD's supervisor, which leads that group, and signals go
// through its control pipe ctrl; elsewhere cmd is CMD and ctrl is nil.
type child struct {
	cmd    *exec.Cmd
	group  bool
	ctrl   *os.File
	exited bool // cmd has been waited for
}

// signal sends sig to CMD, through the supervisor while it runs: it sends
// SIGKILL to every process descended from it, in CMD's group or not.
func (c *child) signal(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok && c.ctrl != nil && !c.exited && c.relay(s) {
		return
	}
	c.direct(sig)
}

// direct sends sig to the group, or to the process zklock started.
func (c *child) direct(sig os.Signal) {
	if c.group {
		if s, ok := sig.(syscall.Signal); ok && signalGroup(c.cmd.Process.Pid, s) == nil {
			return
		}
	}
	_ = c.cmd.Process.Signal(sig)
}

func (c *child) groupAlive() bool { return c.group && signalGroup(c.cmd.Process.Pid, 0) == nil }

// close closes the control pipe, once the supervisor has been waited for
// (a supervisor still running would take it for zklock's death).
func (c *child) close() {
	if c.ctrl != nil {
		c.ctrl.Close()
	}
}
