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
// Pdeathsig missed, lets the kernel kill the server): a server only if its
// command line still names the recorded data directory, so a recycled pid
// is never hit; their directories are removed with their records.
var book = orphans.Book{
	Dir:    filepath.Join(os.TempDir(), "pgtest-pids"),
	Marker: func(dir string) string { return filepath.Join(dir, "data") },
	Gone: func(dir string) {
		if strings.HasPrefix(filepath.Base(dir), "pgtest-") {
			os.RemoveAll(dir)
		}
	},
}
