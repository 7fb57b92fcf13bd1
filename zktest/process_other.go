//go:build !linux

package zktest

import "syscall"

// sysProcAttr puts a server in its own process group. Without Pdeathsig
// (Linux only), a server whose test binary was killed is left to the pid
// files: the next Start kills it (see reap.go).
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
