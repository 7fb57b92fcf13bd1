package zklock_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// One uncontended Mutex.Lock and Release enters at most eight of the root
// package's files, unless the path only spreads over more files the
// functions it already had: a new hop (a function not in
// testdata/lockpath/path.txt) that takes it past eight files fails, and so
// says what joined the path; moving a function of the path between files
// does not. The test steers what a Lock and Release call, not where code
// is placed. A new hop that is meant is added to path.txt.
//
// It is measured with coverage counters (testdata/lockpath writes them just
// before and just after the cycle), leaving out the code go-zookeeper's own
// goroutines run: tap.go, as the bytes of every request go by, and
// replybound.go, as every reply is read, and the callbacks they make into
// the session (callbacks). Whether those run inside the cycle depends on
// the scheduler: a hold arms its own-node watch in the background, and
// under load the watch is armed, and fires at Release, before the cycle
// ends.
func TestIntegration_LockPathFiles(t *testing.T) {
	t.Parallel()
	// The warm-up leaves the lock directory empty: a reaper's pass before
	// the measured cycle (zktest's is every 100 ms) would send that cycle
	// down the path that re-creates it.
	c := zktest.Start(t, zktest.WithContainerCheckInterval(time.Hour))
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

	names := funcNames(t)
	files := map[string][]string{}
	entered := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] == "0.0%" {
			continue
		}
		loc, ok := strings.CutPrefix(f[0], "github.com/zklock/zklock/")
		file, at, _ := strings.Cut(loc, ":")
		if !ok || strings.Contains(file, "/") || file == "tap.go" || file == "replybound.go" || callbacks[file+":"+f[1]] {
			continue
		}
		name := names[file+":"+strings.TrimSuffix(at, ":")]
		require.NotEmpty(t, name, "no function of the root package at %s", loc)
		files[file] = append(files[file], name)
		entered[name] = true
	}
	var lines []string
	for file, funcs := range files {
		lines = append(lines, fmt.Sprintf("%s (%s)", file, strings.Join(funcs, ", ")))
	}
	slices.Sort(lines)
	t.Logf("%d files, %d functions:\n%s", len(files), len(entered), strings.Join(lines, "\n"))

	b, err := os.ReadFile(filepath.Join("testdata", "lockpath", "path.txt"))
	require.NoError(t, err)
	known := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			known[line] = true
		}
	}
	var hops []string
	for name := range entered {
		if !known[name] {
			hops = append(hops, name)
		}
	}
	slices.Sort(hops)
	if len(files) > 8 {
		require.Empty(t, hops, "one Lock and Release enters %d root files, more than 8, through functions new to the path (testdata/lockpath/path.txt)", len(files))
		t.Logf("%d files, more than 8, but no function new to the path: the path's functions were moved, not added to", len(files))
	} else if len(hops) > 0 {
		t.Logf("new on the path, within 8 files: %v", hops)
	}
}

// funcNames returns the root package's functions by where the coverage
// tool names them (file:line of the declaration), as Receiver.Method or
// Function: a name that stays when the function moves to another file.
func funcNames(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("*.go")
	require.NoError(t, err)
	names := map[string]string{}
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				typ := fd.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			names[fmt.Sprintf("%s:%d", p, fset.Position(fd.Pos()).Line)] = name
		}
	}
	return names
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
