package pgtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// pidDir records every server Launch starts, one file per server named
// after the postmaster's pid, holding the pid and start time of the process
// that owns it and the server's directory. Launch reaps the servers whose
// owner has exited (a test binary that was SIGKILLed runs neither its
// cleanup nor, if Pdeathsig missed, lets the kernel kill the server) and
// removes their directories.
var pidDir = filepath.Join(os.TempDir(), "pgtest-pids")

func writePidFile(pid int, dir string) string {
	if err := os.MkdirAll(pidDir, 0o755); err != nil {
		return ""
	}
	path := filepath.Join(pidDir, strconv.Itoa(pid))
	body := fmt.Sprintf("owner %d %s\ndir %s\n", os.Getpid(), procStart(os.Getpid()), dir)
	if os.WriteFile(path, []byte(body), 0o644) != nil {
		return ""
	}
	return path
}

func removePidFile(path string) {
	if path != "" {
		os.Remove(path)
	}
}

// reapOrphans kills the recorded servers whose owner is gone and removes
// their directories and pid files. A process is killed only if its command
// line still names the recorded directory, so a recycled pid is never hit.
// It returns the pids it killed.
func reapOrphans() []int {
	entries, err := os.ReadDir(pidDir)
	if err != nil {
		return nil
	}
	var killed []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		path := filepath.Join(pidDir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		var owner int
		var ownerStart, dir string
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 3 && f[0] == "owner":
				owner, _ = strconv.Atoi(f[1])
				ownerStart = f[2]
			case len(f) >= 2 && f[0] == "dir":
				dir = strings.TrimPrefix(line, "dir ")
			}
		}
		if owner != 0 && ownerStart != "" && procStart(owner) == ownerStart {
			continue // the owner lives: its Close stops the server
		}
		if dir != "" && bytes.Contains(procCmdline(pid), []byte(filepath.Join(dir, "data")+"\x00")) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
		if dir != "" && strings.HasPrefix(filepath.Base(dir), "pgtest-") {
			os.RemoveAll(dir)
		}
		os.Remove(path)
	}
	return killed
}

// procStart returns the start time (clock ticks since boot) of pid, field
// 22 of /proc/<pid>/stat, or "" when there is no such process.
func procStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func procCmdline(pid int) []byte {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return b
}
