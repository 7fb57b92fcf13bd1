package reliability

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseTimeline parses every HTML page in dir as XML and returns, per file,
// the hold ids drawn (data-hold) and the element ids.
func parseTimeline(t *testing.T, dir string) (holds map[string][]string, ids map[string]map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.html"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	holds, ids = map[string][]string{}, map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		s := string(b)
		for _, bad := range []string{"<script", "src=", `href="http`, "url(", "@import"} {
			require.NotContains(t, s, bad, "%s must be self-contained", f)
		}
		d := xml.NewDecoder(strings.NewReader(s))
		name := filepath.Base(f)
		ids[name] = map[string]bool{}
		for {
			tok, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s is not well-formed", f)
			if se, ok := tok.(xml.StartElement); ok {
				for _, a := range se.Attr {
					switch a.Name.Local {
					case "data-hold":
						holds[name] = append(holds[name], a.Value)
					case "id":
						ids[name][a.Value] = true
					}
				}
			}
		}
	}
	return holds, ids
}

// handMade is a small history with a fault, a loss, a failed Lock and a
// C1 violation (w1/1/1 still held when w2/1/1 acquired).
func handMade() *hist {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 300, 100).acq("w2", 1, 5, 200, 400, 200). // overlap: C1
									acq("w1", 2, 310, 420, 500, 300).acq("w3", 1, 50, 510, 0, 400)
	h.add(600, Event{Kind: KindLoss, Worker: "w3", Client: 1, Op: 1, Err: "zklock: lock lost"})
	h.add(650, Event{Kind: KindRelease, Worker: "w3", Client: 1, Op: 1})
	h.add(20, Event{Kind: KindInvoke, Worker: "w2", Client: 2, Op: 1})
	h.add(90, Event{Kind: KindFail, Worker: "w2", Client: 2, Op: 1, Err: "context deadline exceeded"})
	h.add(550, Event{Kind: KindState, Worker: "w3", Client: 1, Session: 0x100 + 400, Name: "suspended"})
	return h.fault(FaultBlackholeClient, "w3", 540, 700)
}

// TestTimelineDrawsEveryHold: a small hand-made history with a fault, a
// loss, a failed Lock and a C1 violation renders as well-formed,
// self-contained pages; every hold is drawn on a window page; the
// violation has its window on timeline.html under the anchor its See names.
func TestTimelineDrawsEveryHold(t *testing.T) {
	hist := Analyze(*handMade())
	vs := CheckExclusion(hist, cfg)
	require.Len(t, vs, 1)
	require.Equal(t, hist.Start()+10e6, vs[0].From)

	dir := t.TempDir()
	path, err := WriteTimeline(dir, "T1", "hand-made <history> & friends", hist, vs)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, TimelineFile), path)
	holds, ids := parseTimeline(t, dir)

	drawn := map[string]bool{}
	for f, hs := range holds {
		if f == TimelineFile {
			continue
		}
		for _, id := range hs {
			drawn[id] = true
		}
	}
	require.Len(t, hist.Acqs, 4)
	for _, a := range hist.Acqs {
		require.True(t, drawn[a.ID], "hold %s missing from the window pages", a.ID)
	}
	see := hist.See(dir, vs[0])
	file, anchor, ok := strings.Cut(see, "#")
	require.True(t, ok)
	require.Equal(t, path, file)
	require.Equal(t, "t=0.010-0.400", anchor)
	require.True(t, ids[TimelineFile][anchor], "no element with id %q in %s", anchor, TimelineFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	main := string(b)
	require.Contains(t, main, "w1/1/1 (token 100) still held when w2/1/1 (token 200) acquired")
	require.Contains(t, main, `stroke="#e00"`)                   // drawn in red
	require.Contains(t, main, "hand-made &lt;history&gt; &amp;") // escaped
	require.Contains(t, main, ">1 violations<")
	require.NotContains(t, main, "forgot")

	// A store finding is drawn and named, but not counted as a violation.
	store := Violation{StoreChecker, "zk register of lock-0: ZooKeeper forgot an acknowledged write", hist.Start() + 300e6, hist.Start() + 350e6}
	_, err = WriteTimeline(dir, "T1", "store", hist, []Violation{store})
	require.NoError(t, err)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), "C1–C7: no violation")
	require.Contains(t, string(b), "acknowledged writes ZooKeeper forgot: 1")
	require.Contains(t, string(b), "ZooKeeper forgot an acknowledged write") // its window, listed
	page, err := os.ReadFile(filepath.Join(dir, "timeline-001.html"))
	require.NoError(t, err)
	require.Contains(t, string(page), `class="loss"`)
	require.Contains(t, string(page), "blackhole-client w3")
	require.Contains(t, string(page), ">400<") // a token label
}

// TestTimelineLongHistory: 10,000 holds over 30 s are cut into pages of
// about pageHolds each, every hold drawn on some page, and the overview
// stays small.
func TestTimelineLongHistory(t *testing.T) {
	h := &hist{}
	for i := range int64(10000) {
		w := fmt.Sprintf("w%d", i%4+1)
		start := i * 3 // ms
		h.acq(w, i+1, start, start+1, start+3, 1000+i)
	}
	h.fault(FaultPauseClient, "w2", 12000, 15000)
	hist := Analyze(*h)
	dir := t.TempDir()
	_, err := WriteTimeline(dir, "long", "10k holds", hist, []Violation{{"C1", "w2/1/4001: made up", hist.Start() + 12000e6, hist.Start() + 12100e6}})
	require.NoError(t, err)
	holds, ids := parseTimeline(t, dir)
	drawn := map[string]bool{}
	for f, hs := range holds {
		if f == TimelineFile {
			require.Less(t, len(hs), 200, "the overview must not draw every hold")
			continue
		}
		require.LessOrEqual(t, len(hs), 2*pageHolds, f)
		for _, id := range hs {
			drawn[id] = true
		}
	}
	require.Len(t, drawn, 10000)
	require.Greater(t, len(holds), 10)
	require.True(t, ids[TimelineFile]["t=12.000-12.100"])
	st, err := os.Stat(filepath.Join(dir, TimelineFile))
	require.NoError(t, err)
	require.Less(t, st.Size(), int64(2<<20))
}

func TestNaturalLess(t *testing.T) {
	require.True(t, naturalLess("w2", "w10"))
	require.True(t, naturalLess("w1", "w1.2"))
	require.True(t, naturalLess("w1.2", "w2"))
	require.False(t, naturalLess("w10", "w9"))
	require.True(t, naturalLess("A", "B"))
}

func TestIndexLinksTimelines(t *testing.T) {
	dir := t.TempDir()
	rs := []Result{{Name: "S1", Title: "x", Acquisitions: 3, Timeline: filepath.Join(dir, "histories", "S1", TimelineFile)},
		{Name: "S5", Negative: "N1", Title: "y", Total: 2, Violations: map[string]int{"C2": 2}}}
	require.NoError(t, WriteIndex(dir, "reliability short", rs))
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	require.NoError(t, err)
	require.Contains(t, string(b), `href="histories/S1/timeline.html"`)
	require.Contains(t, string(b), "C2=2")
	require.NoError(t, xml.Unmarshal(b, new(any)))
}
