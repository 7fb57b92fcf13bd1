package zktest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// pidDir is where the local backend records every server it starts, one
// file per server named after the server's pid. A file holds the pid and
// start time of the test binary that owns the server and the cluster's
// directory. Start reaps (SIGKILLs) the servers whose owner has exited, so
// servers left behind by a test binary that was itself SIGKILLed (where
// neither t.Cleanup nor Pdeathsig ran) do not pile up.
var pidDir = filepath.Join(os.TempDir(), "zktest-pids")

// procStart returns the start time (in clock ticks since boot) of pid, from
// field 22 of /proc/<pid>/stat, or "" when the process does not exist.
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
	return f[19] // fields after "(comm)" start at field 3
}

// procCmdline returns the NUL-separated command line of pid, or nil.
func procCmdline(pid int) []byte {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return b
}

func writePidFile(pid int, clusterDir string) string {
	if err := os.MkdirAll(pidDir, 0o777); err != nil {
		return ""
	}
	path := filepath.Join(pidDir, strconv.Itoa(pid))
	body := fmt.Sprintf("owner %d %s\ndir %s\n", os.Getpid(), procStart(os.Getpid()), clusterDir)
	if os.WriteFile(path, []byte(body), 0o666) != nil {
		return ""
	}
	return path
}

func removePidFile(path string) {
	if path != "" {
		os.Remove(path)
	}
}

// reapOrphans kills servers recorded in pidDir whose owning test binary is
// gone, and removes stale pid files. A server is only killed if its command
// line still carries the recorded cluster directory, so a recycled pid is
// never hit. It returns the pids it killed.
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
		if owner != 0 && procStart(owner) == ownerStart && ownerStart != "" {
			continue // owner alive: its cleanup will stop the server
		}
		if dir != "" && bytes.Contains(procCmdline(pid), []byte("-Dzktest.dir="+dir+"\x00")) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
		os.Remove(path)
	}
	return killed
}

// RunningServers returns the pids of ZooKeeper server processes started by
// this test binary (local backend) that are still running, found by
// scanning /proc for the -Dzktest.owner=<our pid> marker on their command
// line. After every test's cleanup has run it should be empty; call it from
// TestMain after m.Run to catch leaks. Killed servers that the kernel has
// not yet reaped (zombies) are not reported.
func RunningServers() []int {
	marker := []byte("-Dzktest.owner=" + strconv.Itoa(os.Getpid()) + "\x00")
	return scanProc(func(cmdline []byte) bool { return bytes.Contains(cmdline, marker) })
}

// scanProc returns the sorted pids of live (non-zombie) processes whose
// command line matches.
func scanProc(match func(cmdline []byte) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl := procCmdline(pid)
		if len(cl) == 0 || !match(cl) {
			continue
		}
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i >= 0 && bytes.HasPrefix(bytes.TrimSpace(st[i+1:]), []byte("Z")) {
				continue
			}
		}
		pids = append(pids, pid)
	}
	sort.Ints(pids)
	return pids
}
