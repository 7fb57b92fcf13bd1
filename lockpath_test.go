package zklock_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// One uncontended Mutex.Lock and Release runs code in at most eight of the
// root package's files: a reader following it passes a handful of files.
// It is measured with coverage counters (testdata/lockpath writes them just
// before and just after the cycle), leaving out the code go-zookeeper's own
// goroutines run: tap.go, as the bytes of every request go by, and
// replybound.go, as every reply is read, and the callbacks they make into the session (callbacks). Whether those run inside
// the cycle depends on the scheduler: a hold arms its own-node watch in the
// background, and under load the watch is armed, and fires at Release,
// before the cycle ends.
func TestIntegration_LockPathFiles(t *testing.T) {
	c := zktest.Start(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "lockpath")
	build := exec.Command("go", "build", "-cover", "-covermode=atomic",
		"-coverpkg=github.com/zklock/zklock,./testdata/lockpath", "-o", bin, "./testdata/lockpath")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin, c.Servers()[0], dir).CombinedOutput()
	require.NoError(t, err, "%s", out)

	before, after := counters(t, dir, "before"), counters(t, dir, "after")
	var ran strings.Builder
	ran.WriteString("mode: set\n")
	for block, n := range after {
		hit := 0
		if n > before[block] {
			hit = 1
		}
		fmt.Fprintf(&ran, "%s 1 %d\n", block, hit)
	}
	profile := filepath.Join(dir, "ran.txt")
	require.NoError(t, os.WriteFile(profile, []byte(ran.String()), 0o644))
	out, err = exec.Command("go", "tool", "cover", "-func", profile).CombinedOutput()
	require.NoError(t, err, "%s", out)

	files := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] == "0.0%" {
			continue
		}
		loc, ok := strings.CutPrefix(f[0], "github.com/zklock/zklock/")
		file, _, _ := strings.Cut(loc, ":")
		if !ok || strings.Contains(file, "/") || file == "tap.go" || file == "replybound.go" || callbacks[file+":"+f[1]] {
			continue
		}
		files[file] = append(files[file], f[1])
	}
	var names []string
	entered := 0
	for file, funcs := range files {
		names = append(names, fmt.Sprintf("%s (%s)", file, strings.Join(funcs, ", ")))
		entered += len(funcs)
	}
	slices.Sort(names)
	t.Logf("%d files, %d functions:\n%s", len(files), entered, strings.Join(names, "\n"))
	require.LessOrEqual(t, len(files), 8, "files entered by one Lock and Release")
}

// callbacks are the session's functions that go-zookeeper's goroutines call:
// the event callback and what it calls, and what the tap calls as a reply
// goes by.
var callbacks = map[string]bool{
	"liveness.go:onEvent":      true,
	"nodewatch.go:onNodeEvent": true,
	"nodewatch.go:armedWatch":  true,
}

// counters returns the execution counts of the coverage blocks that
// testdata/lockpath wrote into dir/name.
func counters(t *testing.T, dir, name string) map[string]int {
	t.Helper()
	text := filepath.Join(dir, name+".txt")
	out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i", filepath.Join(dir, name), "-o", text).CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(text)
	require.NoError(t, err)
	counts := map[string]int{}
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 3 {
			var n int
			_, err := fmt.Sscan(f[2], &n)
			require.NoError(t, err)
			counts[f[0]] += n
		}
	}
	return counts
}
