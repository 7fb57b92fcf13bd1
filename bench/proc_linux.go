package bench

import "syscall"

// sysProcAttr makes the kernel SIGKILL a driver when the bench process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
