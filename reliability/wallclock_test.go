package reliability

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// zklock must not depend on wall time: a client whose wall clock jumps
// (NTP step, an operator, a VM resumed) must hold, lose and time out exactly
// as one whose does not. Go's time.Now carries a monotonic clock reading,
// and time.Since, time.Until, Time.Sub, Before, After and Equal use it when
// both sides have one; timers, tickers, time.After and context deadlines
// run on the monotonic clock. A wall clock reading enters only through the
// methods that read or rebuild the wall time (Unix, Format, Date, Round,
// Truncate, In, UTC, Local, ...: Round, Truncate, In, UTC and Local strip the
// monotonic reading) or through times made from wall values (time.Unix,
// time.Date, time.Parse). So a library that calls none of these, on no
// time.Time, cannot depend on the wall clock; the ZooKeeper servers' session
// expiry uses System.nanoTime, so neither do they. TestNoWallClock checks
// the first by type-checking the root package's non-test files.

// wallMethods read or rebuild a time.Time's wall clock reading.
var wallMethods = map[string]bool{"Unix": true, "UnixNano": true, "UnixMilli": true, "UnixMicro": true, "Format": true, "AppendFormat": true,
	"String": true, "GoString": true, "Round": true, "Truncate": true, "In": true, "UTC": true, "Local": true, "Zone": true, "ZoneBounds": true,
	"Date": true, "Clock": true, "Year": true, "YearDay": true, "Month": true, "Day": true, "Weekday": true, "ISOWeek": true, "Hour": true,
	"Minute": true, "Second": true, "Nanosecond": true, "MarshalText": true, "MarshalJSON": true, "MarshalBinary": true, "GobEncode": true,
	"AddDate": true}

// wallFuncs make a time.Time from wall values.
var wallFuncs = map[string]bool{"Unix": true, "UnixMilli": true, "UnixMicro": true, "Date": true, "Parse": true, "ParseInLocation": true}

// wallUsesOf type-checks files as package path and returns every use of a
// wall clock reading in them: a wall method called on a time.Time, or a
// time.Time made from wall values.
func wallUsesOf(t *testing.T, fset *token.FileSet, path string, files []*ast.File) []string {
	t.Helper()
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	// The standard library from its export data; other modules as empty
	// packages: what they declare is unknown (and its errors ignored), but
	// time.Time values and the calls on them are typed exactly.
	std := importer.Default()
	imp := importerFunc(func(p string) (*types.Package, error) {
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			pkg := types.NewPackage(p, p[strings.LastIndexByte(p, '/')+1:])
			pkg.MarkComplete()
			return pkg, nil
		}
		return std.Import(p)
	})
	conf := types.Config{Importer: imp, Error: func(error) {}}
	conf.Check(path, fset, files, info)
	resolved := 0 // the check must have typed the time package's uses
	for id, obj := range info.Uses {
		if obj.Pkg() != nil && obj.Pkg().Path() == "time" && (id.Name == "Now" || id.Name == "Since") {
			resolved++
		}
	}
	require.Positive(t, resolved, "time.Now/time.Since not resolved: the check would see nothing")
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pos := fset.Position(sel.Pos())
			where := filepath.Base(pos.Filename) + ":" + strconv.Itoa(pos.Line)
			if s := info.Selections[sel]; s != nil && isTime(s.Recv()) && wallMethods[sel.Sel.Name] {
				out = append(out, where+": Time."+sel.Sel.Name)
			}
			if obj := info.Uses[sel.Sel]; obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == "time" && wallFuncs[sel.Sel.Name] {
				if _, isFunc := obj.(*types.Func); isFunc && obj.Parent() == obj.Pkg().Scope() {
					out = append(out, where+": time."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	return out
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(p string) (*types.Package, error) { return f(p) }

func isTime(t types.Type) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "time" && n.Obj().Name() == "Time"
}

func parseDir(t *testing.T, fset *token.FileSet, dir string, keep func(string) bool) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	var files []*ast.File
	for _, n := range names {
		if !keep(n) {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	require.NotEmpty(t, files)
	return files
}

// displayOnly are the wall-clock uses that only turn a server's timestamp
// into a time.Time for the caller to show, by file and use: no decision of
// the library reads them. Participant.Ctime is the node's ctime; the owner
// id names the process by its start (WithOwner, for people and the
// deadlock graph).
var displayOnly = map[string]bool{"participants.go: time.UnixMilli": true, "owner.go: Time.UnixMilli": true}

// wallByDesign are the files of the one recipe whose job is the wall
// clock: a Schedule's ticks are wall-clock instants (n*every + offset from
// the Unix epoch), named by their Unix milliseconds, and its claims record
// wall times for people to read. No hold, loss, wait or timeout decision
// reads it there either: a tick runs at most once by its node's name and
// the leader's check, and whether a claim's job may start is measured on
// the monotonic clock (Tick.sent).
var wallByDesign = map[string]bool{"schedule.go": true, "schedule_tick.go": true, "schedule_claim.go": true,
	"schedule_history.go": true, "schedule_zk.go": true}

// TestNoWallClock: the root package's code (tests aside, and the
// negative-control build's files, which are not the library) never reads
// the wall clock.
func TestNoWallClock(t *testing.T) {
	fset := token.NewFileSet()
	files := parseDir(t, fset, "..", func(n string) bool {
		return !strings.HasSuffix(n, "_test.go") && filepath.Base(n) != "negative_on.go"
	})
	var uses []string
	for _, u := range wallUsesOf(t, fset, "github.com/zklock/zklock", files) {
		file := u[:strings.IndexByte(u, ':')]
		if !displayOnly[file+u[strings.LastIndexByte(u, ':'):]] && !wallByDesign[file] {
			uses = append(uses, u)
		}
	}
	require.Empty(t, uses, "zklock must measure time with the monotonic clock only")
}

// TestWallClockCheckCanFail: the check finds wall clock uses in a package
// that has them, and none in monotonic-only code.
func TestWallClockCheckCanFail(t *testing.T) {
	src := `package p
import "time"
type s struct{ at time.Time; d time.Duration }
func bad(x s) (int64, string, bool) {
	deadline := time.Unix(1700000000, 0)
	return x.at.Unix(), time.Now().Format(time.RFC3339), time.Now().Round(0).After(deadline)
}
func good(x s) (time.Duration, bool) {
	start := time.Now()
	d := x.d.Round(time.Millisecond) + time.Since(start) + time.Until(x.at) + time.Now().Sub(start)
	return d.Truncate(time.Second), x.at.Before(start)
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	require.NoError(t, err)
	uses := wallUsesOf(t, fset, "p", []*ast.File{f})
	require.Equal(t, []string{"p.go:5: time.Unix", "p.go:6: Time.Unix", "p.go:6: Time.Format", "p.go:6: Time.Round"}, uses)
}
