package peers

import "syscall"

// sysProcAttr makes the kernel SIGKILL a peer when the test process dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
