//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// childAttr puts the child in its own process group, so that a lost lock
// stops everything the child started, not only the child. A child that
// shares zklock's terminal stays in zklock's group: a background group
// could not read the terminal.
func childAttr(group bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: group}
}

// signalGroup sends sig to the process group led by pid; sig 0 only checks
// that the group still has members.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// childStatus is the exit status zklock passes on: the child's own, or
// 128+S if signal S killed it. ok is false if the child did not finish.
func childStatus(ps *os.ProcessState) (code int, ok bool) {
	if ps == nil {
		return 0, false
	}
	if ws, isWS := ps.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return ps.ExitCode(), ps.ExitCode() >= 0
}

// killedBySignal reports whether ps is the end of a process killed by a
// signal (as opposed to one that exited).
func killedBySignal(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled()
}

// isTerminal reports whether r is a terminal: a character device other than
// /dev/null (close enough without a terminal library; a child reading
// /dev/zero from a background group is not a concern).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// fileOwner returns the uid that owns the file fi describes.
func fileOwner(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
