package pgtest

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/zklock/zklock/internal/orphans"
)

// book records every server Launch starts in os.TempDir()/pgtest-pids,
// one file per server named after the postmaster's pid, holding the pid
// and start time of the process that owns it and the server's directory
// (see orphans.Book). Launch reaps the servers whose owner has exited (a
// test binary that was SIGKILLed runs neither its cleanup nor, if
// Pdeathsig missed, lets the kernel kill the server) and removes their
// directories.
var book = orphans.Book{Dir: filepath.Join(os.TempDir(), "pgtest-pids")}

// reapOrphans kills the recorded servers whose owner is gone (a server only
// if its command line still names the recorded directory, so a recycled
// pid is never hit) and removes their directories and records. It returns
// the pids it killed.
func reapOrphans() []int {
	return book.Reap(func(dir string) string { return filepath.Join(dir, "data") }, func(dir string) {
		if strings.HasPrefix(filepath.Base(dir), "pgtest-") {
			os.RemoveAll(dir)
		}
	})
}
