//go:build !linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// startChild starts cmd (its environment and stdio set, not started), in
// a process group of its own if group is set. Without Linux's Pdeathsig
// and child subreapers there is no supervisor: CMD outlives a zklock
// killed with SIGKILL (docs/cli.md).
func startChild(cmd *exec.Cmd, group bool) (*child, error) {
	cmd.SysProcAttr = childAttr(group)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &child{cmd: cmd, group: group}, nil
}

// relay is never called: there is no supervisor, no control pipe.
func (c *child) relay(syscall.Signal) bool { return false }

// supervise refuses: there is no supervisor on this system.
func supervise([]string) int {
	fmt.Fprintln(os.Stderr, "zklock: "+supervisorName+" runs only on Linux")
	return exitUsage
}
