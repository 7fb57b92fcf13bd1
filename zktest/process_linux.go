package zktest

import "syscall"

// sysProcAttr puts a server in its own process group, killed with the
// thread that started it (see startProcess).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
