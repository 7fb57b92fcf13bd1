package main

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// fail reports err on stderr and returns its exit status.
func (a *app) fail(err error) int {
	var ue *usageError
	if errors.As(err, &ue) && len(ue.hint) > 0 {
		a.errorf("%s", ue.msg)
		for _, h := range ue.hint {
			fmt.Fprintln(a.stderr, escapeControls(h))
		}
	} else {
		a.errorf("%v", err)
	}
	code := exitCode(err)
	if code == exitUsage {
		fmt.Fprintln(a.stderr, "Run 'zklock -h' for usage.")
	}
	return code
}

// errorf prints one "zklock: ..." line on stderr. Library errors carry the
// same prefix at every level of wrapping; it is printed once.
func (a *app) errorf(format string, args ...any) {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "zklock: ", "")
	fmt.Fprintln(a.stderr, "zklock: "+escapeControls(msg)) // names and data from ZooKeeper may be in it
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
