package reliability

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The timeline's golden output: fixed histories rendered to HTML and
// compared, byte for byte, with testdata/timeline.golden, so that a change
// to the drawing code that is meant to be a refactoring proves it is one.
// go test ./reliability -run TestTimelineGolden -update-golden rewrites it.

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/timeline.golden")

const goldenFile = "testdata/timeline.golden"

// goldenSmall: handMade and more, every kind of mark on one page (holds
// exclusive and shared on two locks, waits, failed Locks, a loss with its
// busy tail, a kill, open holds, session states, faults on a worker, a
// server, a session and none, one never ended, violations in windows, in
// the final state and of the store).
func goldenSmall() (*History, []Violation) {
	h := handMade()
	h.add(30, Event{Kind: KindInvoke, Worker: "w2", Client: 3, Op: 1})
	h.add(95, Event{Kind: KindFail, Worker: "w2", Client: 3, Op: 1, Err: "zk: session expired"})
	const L1 = "/r/lock-1"
	h.add(100, Event{Kind: KindInvoke, Worker: "w1", Client: 2, Op: 1, Lock: L1, Read: true})
	h.add(120, Event{Kind: KindOK, Worker: "w1", Client: 2, Op: 1, Lock: L1, Read: true, Token: 150, Session: 0x250, Node: L1 + "/r"})
	h.add(250, Event{Kind: KindRelease, Worker: "w1", Client: 2, Op: 1, Lock: L1})
	h.add(700, Event{Kind: KindState, Worker: "w3", Client: 1, Session: 0x100 + 400, Name: "connected"})
	h.add(710, Event{Kind: KindState, Worker: "w3", Client: 1, Session: 0x100 + 400, Name: "lost-track"})
	h.acq("w4", 1, 700, 720, 0, 500)
	h.acq("w10", 1, 730, 740, 0, 600)
	h.fault(FaultKillClient, "w4", 800, 900)
	h.fault(FaultKillLeader, "1", 100, 150)
	h.fault(FaultExpire, "0x290", 560, 580)
	h.fault(FaultDeleteNode, L+"/n", 590, 610)
	h.fault(FaultThrottleClient, "a-target-name-longer-than-twenty-four", 120, 130)
	h.add(850, Event{Kind: KindFaultStart, Fault: FaultPauseClient, Target: "w2"})
	h.add(950, Event{Kind: KindInvoke, Worker: "w1", Client: 1, Op: 3})
	hist := Analyze(*h)
	vs := CheckExclusion(hist, cfg)
	vs = append(vs,
		Violation{"C3", "w1/2/1: made up <to> overlap", hist.Start() + 300e6, hist.Start() + 450e6},
		Violation{"C2", "w3/1/1 (token 400): made up", hist.Start() + 600e6, hist.Start() + 600e6},
		Violation{"C4", "lock-0: a node left behind", 0, 0},
		Violation{StoreChecker, "zk register of lock-0: ZooKeeper forgot an acknowledged write", hist.Start() + 300e6, hist.Start() + 350e6})
	return hist, vs
}

// goldenLong: enough holds for three window pages.
func goldenLong() (*History, []Violation) {
	h := &hist{}
	for i := range int64(2100) {
		w := fmt.Sprintf("w%d", i%3+1)
		start := i // ms
		h.acq(w, i+1, start, start+1, start+2, 1000+i)
	}
	h.fault(FaultPauseClient, "w2", 1200, 1500)
	hist := Analyze(*h)
	return hist, []Violation{{"C1", "w2/1/1201: made up", hist.Start() + 1200e6, hist.Start() + 1210e6}}
}

// canonical puts the two things the timeline draws in map order (the client
// labels of the lanes and the failed Lock calls) in a fixed order.
var (
	laneLabelsRe = regexp.MustCompile(`(?:<text class="cl" x="\d+" y="\d+">c\d+</text>)+`)
	laneLabelRe  = regexp.MustCompile(`<text class="cl" x="\d+" y="\d+">c\d+</text>`)
	failsRe      = regexp.MustCompile(`<g class="fails">[^\n]*?</g>`)
	failRe       = regexp.MustCompile(`<line class="wait"[^>]*/><text class="fx"[^>]*>×<title>[^<]*</title></text>`)
)

// sortedRun returns run with its pieces (matches of piece, which must
// cover it) sorted.
func sortedRun(t *testing.T, run string, piece *regexp.Regexp) string {
	parts := piece.FindAllString(run, -1)
	require.Equal(t, run, strings.Join(parts, ""), "pieces do not cover the run")
	slices.Sort(parts)
	return strings.Join(parts, "")
}

func canonical(t *testing.T, s string) string {
	s = laneLabelsRe.ReplaceAllStringFunc(s, func(run string) string { return sortedRun(t, run, laneLabelRe) })
	return failsRe.ReplaceAllStringFunc(s, func(g string) string {
		inner := strings.TrimSuffix(strings.TrimPrefix(g, `<g class="fails">`), "</g>")
		return `<g class="fails">` + sortedRun(t, inner, failRe) + "</g>"
	})
}

// renderGolden writes the timeline of h and vs (and, for the small one, an
// index linking it) and returns every page, canonical, in name order.
func renderGolden(t *testing.T, name string, h *History, vs []Violation, index bool) map[string]string {
	dir := t.TempDir()
	path, err := WriteTimeline(dir, name, "golden <"+name+"> & co", h, vs)
	require.NoError(t, err)
	if index {
		rs := []Result{{Name: "S1", Title: "x <y>", Acquisitions: 3, Faults: 2, Losses: 1, Seconds: 12.4, Timeline: path},
			{Name: "S5", Negative: "N1", Title: "y", Total: 2, Violations: map[string]int{"C2": 2}, StoreLosses: 1}}
		require.NoError(t, WriteIndex(dir, "golden & index", rs))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = canonical(t, string(b))
	}
	return out
}

// TestTimelineGolden: the small history's pages are as in the golden file,
// and the long one's have the hashes it records.
func TestTimelineGolden(t *testing.T) {
	var b strings.Builder
	h, vs := goldenSmall()
	small := renderGolden(t, "small", h, vs, true)
	for _, f := range slices.Sorted(maps.Keys(small)) {
		fmt.Fprintf(&b, "==== small %s\n%s", f, small[f])
	}
	h, vs = goldenLong()
	long := renderGolden(t, "long", h, vs, false)
	require.Len(t, long, 4, "timeline.html and three window pages")
	for _, f := range slices.Sorted(maps.Keys(long)) {
		fmt.Fprintf(&b, "==== long %s sha256 %x\n", f, sha256.Sum256([]byte(long[f])))
	}
	got := b.String()
	if *updateGolden {
		require.NoError(t, os.WriteFile(goldenFile, []byte(got), 0o644))
	}
	want, err := os.ReadFile(goldenFile)
	require.NoError(t, err)
	require.Equal(t, string(want), got)
}
