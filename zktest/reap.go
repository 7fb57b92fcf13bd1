package zktest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/zklock/zklock/internal/orphans"
)

// pidDir is where the local backend records every server it starts, one
// file per server named after the server's pid. A file holds the pid and
// start time of the test binary that owns the server and the cluster's
// directory. Start reaps (SIGKILLs) the servers whose owner has exited, so
// servers left behind by a test binary that was itself SIGKILLed (where
// neither t.Cleanup nor Pdeathsig ran) do not pile up.
var pidDir = filepath.Join(os.TempDir(), "zktest-pids")

// book records every server the local backend starts (see orphans.Book):
// Start reaps the servers whose owner has exited, so servers left behind
// by a test binary that was itself SIGKILLed (where neither t.Cleanup nor
// Pdeathsig ran) do not pile up.
var book = orphans.Book{Dir: pidDir}

func writePidFile(pid int, clusterDir string) string { return book.Add(pid, clusterDir) }

func removePidFile(path string) { orphans.Remove(path) }

// reapOrphans kills the recorded servers whose owning test binary is gone
// (a server only if its command line still carries the cluster's
// directory) and removes stale records. It returns the pids it killed.
func reapOrphans() []int {
	return book.Reap(func(dir string) string { return "-Dzktest.dir=" + dir }, nil)
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
		cl := orphans.ProcCmdline(pid)
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
