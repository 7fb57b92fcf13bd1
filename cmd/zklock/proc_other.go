//go:build !unix

package main

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// Without process groups, the child alone is signalled.

func childAttr(bool) *syscall.SysProcAttr { return nil }

func signalGroup(int, syscall.Signal) error { return errors.ErrUnsupported }

func childStatus(ps *os.ProcessState) (int, bool) {
	if ps == nil {
		return 0, false
	}
	return ps.ExitCode(), ps.ExitCode() >= 0
}

func killedBySignal(*os.ProcessState) bool { return false }

func isTerminal(io.Reader) bool { return false }

// fileOwner: no uid on this system; the mode check alone applies.
func fileOwner(os.FileInfo) (uid int, ok bool) { return 0, false }
