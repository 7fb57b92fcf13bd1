//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
)

// On Linux zklock does not start CMD itself: it starts its own binary again
// as CMD's supervisor ("zklock-supervise MODE PATH ARG0 ARG..."), which
// starts CMD, waits for it and exits with its status. zklock writes to the
// supervisor's fd 3, a pipe, the number of each signal CMD is to get. The
// end of that pipe is zklock's end, however zklock ended (the kernel closes
// a killed process's files): then the supervisor sends SIGKILL to CMD and
// to every process descended from it, and exits once CMD is gone.
//
// The supervisor is a child subreaper, so an orphan among CMD's
// descendants is adopted by it rather than by init and stays among its
// descendants wherever it moved (setsid, a daemon's double fork). CMD gets
// Pdeathsig SIGKILL from the supervisor, so that it dies if the supervisor
// is killed too. In group MODE the supervisor leads CMD's process group;
// it drops the group's stopSignals (zklock relays those meant for CMD).
// docs/cli.md says why SIGKILL and where this ends.

// supervisorCtrlFD is the control pipe's descriptor in the supervisor.
const supervisorCtrlFD = 3

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (Linux 3.4).
const prSetChildSubreaper = 36

// startChild starts cmd (its environment and stdio set, not started) under
// a supervisor, in a process group of its own if group is set.
func startChild(cmd *exec.Cmd, group bool) (*child, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	mode := "tty"
	if group {
		mode = "group"
	}
	sup := &exec.Cmd{
		Path:        "/proc/self/exe", // this binary, even if its file was replaced since it started
		Args:        append([]string{supervisorName, mode, cmd.Path}, cmd.Args...),
		Env:         cmd.Env,
		Dir:         cmd.Dir,
		Stdin:       cmd.Stdin,
		Stdout:      cmd.Stdout,
		Stderr:      cmd.Stderr,
		ExtraFiles:  []*os.File{r},
		SysProcAttr: childAttr(group),
	}
	if err := sup.Start(); err != nil {
		w.Close()
		// Not %w: a missing /proc is not a missing CMD (exit 126, not 127).
		return nil, fmt.Errorf("start the supervisor of %s: %v", cmd.Path, err)
	}
	return &child{cmd: sup, group: group, ctrl: w}, nil
}

// relay asks the supervisor to send sig to CMD; false if it is gone.
func (c *child) relay(sig syscall.Signal) bool {
	if _, err := c.ctrl.Write([]byte{byte(sig)}); err != nil {
		return false
	}
	if sig == syscall.SIGKILL {
		_ = c.cmd.Process.Signal(syscall.SIGCONT) // a stopped supervisor would not act on it
	}
	return true
}

// supervise is the supervisor's main. It returns its exit status: CMD's,
// 128+S if signal S killed CMD, or 127 (126) if CMD could not be found (or
// started).
func supervise(args []string) int {
	// CMD's Pdeathsig fires when the thread that forked it ends, not the
	// process (golang/go#27505): this goroutine keeps its thread until exit.
	runtime.LockOSThread()
	if len(args) < 3 || (args[0] != "group" && args[0] != "tty") {
		fmt.Fprintln(os.Stderr, "zklock: "+supervisorName+" is started by zklock, not by hand")
		return exitUsage
	}
	group, path, argv := args[0] == "group", args[1], args[2:]
	ctrl := os.NewFile(supervisorCtrlFD, "zklock control pipe")
	if fi, err := ctrl.Stat(); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		fmt.Fprintln(os.Stderr, "zklock: "+supervisorName+": no control pipe on fd 3")
		return exitUsage
	}
	syscall.CloseOnExec(supervisorCtrlFD)

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, stopSignals...) // caught, not ignored: CMD would inherit SIG_IGN
	// Linux older than 3.4 cannot adopt: CMD's orphans go to init as before.
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)

	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		// Go checks, after the prctl, that the supervisor is still its parent.
		Sys: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "zklock: fork/exec %s: %v\n", path, err)
		if errors.Is(err, syscall.ENOENT) {
			return exitNotFound
		}
		return exitCannotExec
	}
	exited := make(chan int, 1)
	go reapCMD(pid, exited)
	relay := make(chan syscall.Signal)
	go readControl(ctrl, relay)
	for {
		select {
		case <-sigs: // the group's: zklock relays those meant for CMD
		case sig, ok := <-relay:
			switch {
			case !ok: // zklock is gone, and with it the lock
				relay = nil
				killDescendants(os.Getpid())
			case sig == syscall.SIGKILL:
				killDescendants(os.Getpid())
			default:
				forward(pid, group, sig)
			}
		case code := <-exited:
			return code
		}
	}
}

// readControl sends each signal number read from the control pipe on
// relay, and closes relay at the end of the pipe.
func readControl(ctrl *os.File, relay chan<- syscall.Signal) {
	defer close(relay)
	b := make([]byte, 64)
	for {
		n, err := ctrl.Read(b)
		for _, s := range b[:n] {
			relay <- syscall.Signal(s)
		}
		if err != nil {
			return
		}
	}
}

// forward sends sig to CMD: in group mode to the supervisor's process
// group, CMD's (the supervisor drops its own copy), and to CMD itself if
// CMD left that group.
func forward(pid int, group bool, sig syscall.Signal) {
	if group && slices.Contains(stopSignals, os.Signal(sig)) {
		pg := syscall.Getpgrp()
		_ = syscall.Kill(-pg, sig)
		if cpg, err := syscall.Getpgid(pid); err != nil || cpg == pg {
			return
		}
	}
	_ = syscall.Kill(pid, sig)
}

// reapCMD waits for CMD, reaping on the way the orphans the supervisor
// adopted, and sends CMD's exit status as zklock passes it on.
func reapCMD(pid int, exited chan<- int) {
	for {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			fmt.Fprintf(os.Stderr, "zklock: wait for CMD: %v\n", err)
			exited <- exitError
			return
		case wpid == pid && ws.Signaled():
			exited <- 128 + int(ws.Signal())
			return
		case wpid == pid:
			exited <- ws.ExitStatus()
			return
		}
	}
}
