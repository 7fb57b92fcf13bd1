//go:build !linux

package peers

import "syscall"

// sysProcAttr: no parent-death signal outside Linux; t.Cleanup still kills peers.
func sysProcAttr() *syscall.SysProcAttr { return nil }
