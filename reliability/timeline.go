// The timeline's model: what a history is drawn from (lanes per worker and
// client, lock colours, fault rows, merged violation windows, the window
// pages), WindowAnchor and See. timeline_svg.go draws it; timeline_pages.go
// writes the HTML pages.

package reliability

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// The timeline: a history drawn as self-contained HTML pages with inline SVG
// (no scripts, no fetches), so that a person can read what the checkers
// judged. timeline.html holds the overview of the whole run (one row per
// worker process, shaded by how much of the time its clients held, faults
// and violations marked, each window a link), one zoomed window around each
// violation with the checker's explanation, and links to the window pages
// timeline-NNN.html, which draw every hold of their stretch of time: one
// lane per worker process with a sub-lane per client, each hold a bar
// labelled with its token (when it fits; the tooltip always has it), the
// wait before it a thin line, losses, releases, kills and session states
// marked, faults shaded across the lanes and named in the nemesis row,
// violations in red. Pages are cut so that each draws at most about
// pageHolds holds: a 30 s run with 10,000 holds is a few dozen light pages.

// TimelineFile is the name of a scenario's main timeline page.
const TimelineFile = "timeline.html"

// WindowAnchor names a time window of a history in a timeline URL:
// "t=<from>-<to>", seconds since t0 with millisecond precision.
func WindowAnchor(t0, from, to int64) string {
	return fmt.Sprintf("t=%.3f-%.3f", float64(from-t0)/1e9, float64(windowEnd(from, to)-t0)/1e9)
}

// windowEnd is where a window [from, to] of a violation ends: at from
// when to is open (MaxInt64) or before from.
func windowEnd(from, to int64) int64 {
	if to == math.MaxInt64 || to < from {
		return from
	}
	return to
}

// Start returns the time of the history's first event (0 if empty).
func (h *History) Start() int64 {
	if len(h.Events) == 0 {
		return 0
	}
	return h.Events[0].T
}

// end returns the time of the history's last event.
func (h *History) end() int64 {
	if len(h.Events) == 0 {
		return 0
	}
	return h.Events[len(h.Events)-1].T
}

// See returns where to look at v in a timeline written to dir:
// "<dir>/timeline.html#t=<from>-<to>" (no window for a finding about the
// final state).
func (h *History) See(dir string, v Violation) string {
	p := filepath.Join(dir, TimelineFile)
	if v.From == 0 && v.To == 0 {
		return p + "#final"
	}
	return p + "#" + WindowAnchor(h.Start(), v.From, v.To)
}

// laneKey names client c of worker w in timeline.lanes.
func laneKey(w string, c int) string { return w + "/" + strconv.Itoa(c) }

// lane is one client's sub-lane.
type lane struct {
	worker string
	client int
	y      int // top, px
}

type timeline struct {
	name, title string
	h           *History
	vs          []Violation
	t0, t1      int64
	workers     []string
	lanes       map[string]*lane // by laneKey
	wlanes      map[string][2]int
	locks       map[string]int    // lock path -> color index
	bySession   map[int64]string  // session -> worker
	byNode      map[string]string // node -> worker
	inViolation map[string]bool   // hold ids named by a violation
	height      int               // lanes' total height
	nemRows     int
	faultRow    []int // row of each fault in the nemesis band
	vspans      []vspan
}

var holdIDRe = regexp.MustCompile(`[A-Za-z0-9_.-]+/\d+/\d+`)

func newTimeline(name, title string, h *History, vs []Violation) *timeline {
	tl := &timeline{name: name, title: title, h: h, vs: vs, t0: h.Start(), t1: h.end(), lanes: map[string]*lane{}, wlanes: map[string][2]int{},
		locks: map[string]int{}, bySession: map[int64]string{}, byNode: map[string]string{}, inViolation: map[string]bool{}}
	if tl.t1 <= tl.t0 {
		tl.t1 = tl.t0 + 1e9
	}
	tl.layLanes(tl.collect())
	tl.rowFaults()
	for _, v := range vs {
		for _, id := range holdIDRe.FindAllString(v.Detail, -1) {
			tl.inViolation[id] = true
		}
	}
	tl.vspans = tl.spans()
	return tl
}

// collect finds the workers (in the order they first appear), the locks
// (numbered in name order, for their colours), which worker each session
// and node is, and returns each worker's clients.
func (tl *timeline) collect() map[string]map[int]bool {
	clients := map[string]map[int]bool{}
	addClient := func(w string, c int) {
		if w == "" {
			return
		}
		if clients[w] == nil {
			clients[w] = map[int]bool{}
			tl.workers = append(tl.workers, w)
		}
		clients[w][c] = true
	}
	var lockNames []string
	for _, e := range tl.h.Events {
		switch e.Kind {
		case KindInvoke, KindOK, KindFail, KindLoss, KindRelease, KindState:
			addClient(e.Worker, e.Client)
		}
		if e.Lock != "" && (e.Kind == KindInvoke || e.Kind == KindOK) {
			if _, ok := tl.locks[e.Lock]; !ok {
				tl.locks[e.Lock] = 0
				lockNames = append(lockNames, e.Lock)
			}
		}
		if e.Kind == KindState && e.Session != 0 {
			tl.bySession[e.Session] = e.Worker
		}
	}
	sort.Strings(lockNames)
	for i, l := range lockNames {
		tl.locks[l] = i
	}
	for _, a := range tl.h.Acqs {
		tl.bySession[a.Session] = a.Worker
		tl.byNode[a.Node] = a.Worker
	}
	return clients
}

// layLanes sorts the workers naturally and stacks their lanes, a sub-lane
// per client in client order, 4 px between workers.
func (tl *timeline) layLanes(clients map[string]map[int]bool) {
	sort.Slice(tl.workers, func(i, j int) bool { return naturalLess(tl.workers[i], tl.workers[j]) })
	y := 0
	for _, w := range tl.workers {
		cs := make([]int, 0, len(clients[w]))
		for c := range clients[w] {
			cs = append(cs, c)
		}
		sort.Ints(cs)
		top := y
		for _, c := range cs {
			tl.lanes[laneKey(w, c)] = &lane{worker: w, client: c, y: y}
			y += tlSubLane
		}
		tl.wlanes[w] = [2]int{top, y}
		y += 4
	}
	tl.height = y
}

// rowFaults puts each fault on a row of the nemesis band: faults that
// overlap (with room for their labels) go on separate rows. The band is at
// most 6 rows high; faults on later rows are drawn on its last.
func (tl *timeline) rowFaults() {
	var rowEnd []int64
	for _, f := range tl.h.Faults {
		end := max(tl.orEnd(f.End), f.Start+int64(float64(tl.t1-tl.t0)/tlWidth*60)) // room for the label
		r := 0
		for r < len(rowEnd) && rowEnd[r] > f.Start {
			r++
		}
		if r == len(rowEnd) {
			rowEnd = append(rowEnd, 0)
		}
		rowEnd[r] = end
		tl.faultRow = append(tl.faultRow, r)
	}
	tl.nemRows = max(1, min(len(rowEnd), 6))
}

// orEnd returns t, or the history's end if t is open (MaxInt64).
func (tl *timeline) orEnd(t int64) int64 {
	if t == math.MaxInt64 {
		return tl.t1
	}
	return t
}

// naturalLess orders "w2" before "w10" and "w1" before "w1.2".
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := leadingDigits(a), leadingDigits(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// faultWorker returns the worker lane a fault's target names, if any.
func (tl *timeline) faultWorker(f Interval) string {
	if _, ok := tl.wlanes[f.Target]; ok {
		return f.Target
	}
	if w, ok := tl.byNode[f.Target]; ok {
		return w
	}
	if sid, err := strconv.ParseInt(strings.TrimPrefix(f.Target, "0x"), 16, 64); err == nil && strings.HasPrefix(f.Target, "0x") {
		return tl.bySession[sid]
	}
	return ""
}

// niceFloor rounds d (seconds) down to 1, 2 or 5 times a power of ten.
func niceFloor(d float64) float64 {
	if d <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= d*(1+1e-9) {
			return m * p
		}
	}
	return p
}

// vspan is a stretch of time covered by overlapping violation windows.
type vspan struct {
	from, to int64
	n        int
	anchor   string // the first violation's
	checkers []string
	detail   string // the first violation's
}

// spans merges the violations' windows.
func (tl *timeline) spans() []vspan {
	var ws []vspan
	for _, v := range tl.vs {
		if v.From == 0 && v.To == 0 {
			continue
		}
		ws = append(ws, vspan{from: v.From, to: windowEnd(v.From, v.To), n: 1, anchor: WindowAnchor(tl.t0, v.From, v.To), checkers: []string{v.Checker}, detail: v.Checker + ": " + v.Detail})
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].from < ws[j].from })
	var out []vspan
	for _, w := range ws {
		if k := len(out) - 1; k >= 0 && w.from <= out[k].to {
			out[k].to = max(out[k].to, w.to)
			out[k].n++
			if !slices.Contains(out[k].checkers, w.checkers[0]) {
				out[k].checkers = append(out[k].checkers, w.checkers[0])
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// pageHolds is about how many holds a window page draws.
const pageHolds = 1000

type page struct {
	file     string
	from, to int64
}

// pagesFor cuts [t0, t1] into windows of a nice length holding about
// pageHolds holds each.
func (tl *timeline) pagesFor() []page {
	span := tl.t1 - tl.t0
	n := max(1, len(tl.h.Acqs))
	w := max(niceFloor(float64(span)/1e9*pageHolds/float64(n)), 0.1)
	var out []page
	for i, t := 0, tl.t0; t < tl.t1 || i == 0; i, t = i+1, t+int64(w*1e9) {
		out = append(out, page{file: fmt.Sprintf("timeline-%03d.html", i+1), from: t, to: min(t+int64(w*1e9), tl.t1)})
	}
	return out
}
