package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/zklock/zklock"
)

// Exit statuses (docs/cli.md). Besides these, zklock exits with the child's
// own status, or 128+S when the child was killed by signal S.
const (
	exitOK          = 0
	exitError       = 1   // cannot connect, ZooKeeper refused an operation, bad ACL or auth
	exitUsage       = 2   // bad flag, bad path, missing argument, verb not available
	exitNotAcquired = 3   // --timeout elapsed, --try found the lock taken, or a signal ended the wait
	exitLost        = 4   // the lock was lost while the child ran (the child was signalled)
	exitCannotExec  = 126 // CMD was found but could not be started (as env(1) and timeout(1))
	exitNotFound    = 127 // CMD was not found
)

// usageError is a mistake on the command line: exit 2. Its hint, if
// any, is printed on lines of their own after it.
type usageError struct {
	msg  string
	hint []string
}

func (e *usageError) Error() string {
	if len(e.hint) == 0 {
		return e.msg
	}
	return e.msg + "\n" + strings.Join(e.hint, "\n")
}

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// interrupted is the cause of a wait that a signal cancelled.
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// errUnreachable: no ZooKeeper server answered within the connect bound.
var errUnreachable = errors.New("no ZooKeeper server answered")

// exitCode maps an error to the exit status of the contract.
func exitCode(err error) int {
	var (
		ue  *usageError
		sig *interrupted
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, zklock.ErrInvalidPath), errors.Is(err, zklock.ErrInvalidArgument):
		return exitUsage
	case errors.Is(err, errUnreachable):
		return exitError
	case errors.Is(err, zklock.ErrLocked), errors.Is(err, context.DeadlineExceeded), errors.As(err, &sig):
		return exitNotAcquired
	case errors.Is(err, zklock.ErrLost):
		return exitLost
	}
	return exitError
}

// exitCodeSetting parses an exit status flag: 0 to 255.
func exitCodeSetting(field func(*config) *int) func(*config, string) error {
	return func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 255 {
			return errors.New("want an exit status, 0 to 255")
		}
		*field(c) = n
		return nil
	}
}

// Outcomes: what ended a run, logged with its exit status (attributes
// "outcome" and "exit_code") so that zklock's own outcomes can be told from
// CMD's status, whatever the numbers.
const (
	outcomeChild       = "child"        // CMD exited on its own while the lock was held: its status
	outcomeReleased    = "released"     // no CMD: released on a signal
	outcomeNotAcquired = "not-acquired" // --conflict-exit-code
	outcomeLost        = "lost"         // --lost-exit-code
	outcomeError       = "error"        // 1
	outcomeCannotRun   = "cannot-run"   // 126, 127
)

// status maps one of zklock's own statuses to the one the flags ask for:
// exitNotAcquired to --conflict-exit-code, exitLost to --lost-exit-code.
// CMD's status never goes through it.
func (a *app) status(code int) int {
	switch code {
	case exitNotAcquired:
		return a.conflictExit
	case exitLost:
		return a.lostExit
	}
	return code
}

// outcomeOf names one of zklock's own statuses (before status maps it).
func outcomeOf(code int) string {
	switch code {
	case exitOK:
		return outcomeReleased
	case exitNotAcquired:
		return outcomeNotAcquired
	case exitLost:
		return outcomeLost
	case exitCannotExec, exitNotFound:
		return outcomeCannotRun
	}
	return outcomeError
}

// fail reports err and returns its exit status: a usage error plainly on
// stderr (the log's format may not be known yet), any other through the
// log, with the outcome and the status.
func (a *app) fail(err error) int {
	code := exitCode(err)
	if code == exitUsage {
		msg := err.Error()
		var ue *usageError
		if errors.As(err, &ue) && len(ue.hint) > 0 {
			msg = ue.msg
		}
		fmt.Fprintln(a.stderr, logPrefix+escapeControls(strings.ReplaceAll(msg, logPrefix, "")))
		if ue != nil {
			for _, h := range ue.hint {
				fmt.Fprintln(a.stderr, escapeControls(h))
			}
		}
		fmt.Fprintln(a.stderr, "Run 'zklock -h' for usage.")
		return code
	}
	return a.outcome(code, "%v", err)
}

// outcome logs one of zklock's own outcomes (code, before status maps
// it) at Error level, with its message, and returns the exit status.
func (a *app) outcome(code int, format string, args ...any) int {
	st := a.status(code)
	a.log.Error(message(format, args...), "outcome", outcomeOf(code), "exit_code", st)
	return st
}

// errorf logs one error line. Library errors carry the "zklock: " prefix at
// every level of wrapping; the line has it once.
func (a *app) errorf(format string, args ...any) {
	a.log.Error(message(format, args...))
}

func message(format string, args ...any) string {
	return strings.ReplaceAll(fmt.Sprintf(format, args...), logPrefix, "")
}

func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return sig.String()
}
