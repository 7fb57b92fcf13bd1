//go:build !linux

package bench

import "syscall"

// sysProcAttr: no parent-death signal outside Linux; t.Cleanup still kills drivers.
func sysProcAttr() *syscall.SysProcAttr { return nil }
