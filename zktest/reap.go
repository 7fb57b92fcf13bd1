package zktest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"

	"github.com/zklock/zklock/internal/orphans"
)

// book records every server the local backend starts in
// os.TempDir()/zktest-pids, one file per server named after the server's
// pid, holding the pid and start time of the test binary that owns the
// server and the cluster's directory (see orphans.Book). Start reaps
// (SIGKILLs) the servers whose owner has exited, so servers left behind
// by a test binary that was itself SIGKILLed (where neither t.Cleanup nor
// Pdeathsig ran) do not pile up: a server only if its command line still
// carries the cluster's directory.
var book = orphans.Book{
	Dir:    filepath.Join(os.TempDir(), "zktest-pids"),
	Marker: func(dir string) string { return "-Dzktest.dir=" + dir },
}

// RunningServers returns the pids of ZooKeeper server processes started by
// this test binary (local backend) that are still running, found by
// scanning /proc for the -Dzktest.owner=<our pid> marker on their command
// line. After every test's cleanup has run it should be empty; call it from
// TestMain after m.Run to catch leaks. Killed servers that the kernel has
// not yet reaped (zombies) are not reported.
func RunningServers() []int {
	marker := []byte("-Dzktest.owner=" + strconv.Itoa(os.Getpid()) + "\x00")
	return orphans.Scan(func(cmdline []byte) bool { return bytes.Contains(cmdline, marker) })
}
