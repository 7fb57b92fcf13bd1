package reliability

import (
	"bufio"
	"fmt"
	"html"
	"math"
	"os"
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

const (
	tlWidth    = 1400 // SVG width in px
	tlLeft     = 90   // label column
	tlRight    = 10
	tlSubLane  = 13 // px per client sub-lane
	tlNemRow   = 16 // px per nemesis row
	tlAxis     = 22
	tlViolRow  = 15
	pageHolds  = 1000 // holds per window page, about
	maxDetails = 20   // violations drawn in their own window on timeline.html
)

// TimelineFile is the name of a scenario's main timeline page.
const TimelineFile = "timeline.html"

// WindowAnchor names a time window of a history in a timeline URL:
// "t=<from>-<to>", seconds since t0 with millisecond precision.
func WindowAnchor(t0, from, to int64) string {
	if to == math.MaxInt64 || to < from {
		to = from
	}
	return fmt.Sprintf("t=%.3f-%.3f", float64(from-t0)/1e9, float64(to-t0)/1e9)
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
	lanes       map[string]*lane // "worker/client"
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
	for _, e := range h.Events {
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
	for _, a := range h.Acqs {
		tl.bySession[a.Session] = a.Worker
		tl.byNode[a.Node] = a.Worker
	}
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
			tl.lanes[w+"/"+strconv.Itoa(c)] = &lane{worker: w, client: c, y: y}
			y += tlSubLane
		}
		tl.wlanes[w] = [2]int{top, y}
		y += 4
	}
	tl.height = y
	// Nemesis rows: faults that overlap go on separate rows.
	var rowEnd []int64
	for _, f := range h.Faults {
		end := f.End
		if end == math.MaxInt64 {
			end = tl.t1
		}
		end = max(end, f.Start+int64(float64(tl.t1-tl.t0)/tlWidth*60)) // room for the label
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
	for _, v := range vs {
		for _, id := range holdIDRe.FindAllString(v.Detail, -1) {
			tl.inViolation[id] = true
		}
	}
	tl.vspans = tl.spans()
	return tl
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

var lockColors = []string{"#4e79a7", "#59a14f", "#9c755f", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#bab0ac"}

func faultColor(f string) string {
	switch f {
	case FaultPauseClient, FaultPauseLeader:
		return "#f28e2b"
	case FaultThrottleClient:
		return "#ffbe7d"
	case FaultKillClient, FaultKillLeader, FaultKillFollower, FaultAllDown:
		return "#7f7f7f"
	case FaultBlackholeClient:
		return "#3b3b98"
	case FaultExpire:
		return "#9467bd"
	case FaultDeleteNode:
		return "#d37295"
	case FaultDropCreate, FaultDropCreateLag:
		return "#17becf"
	}
	return "#bcbd22"
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

func faultLabel(f Interval) string {
	t := f.Target
	if len(t) > 24 {
		t = "…" + t[len(t)-20:]
	}
	return f.Fault + " " + t
}

// svg draws [from, to) of the history into b; detailed draws every hold
// (a window page or a violation's window), otherwise the overview.
type canvas struct {
	tl       *timeline
	from, to int64
	b        *strings.Builder
	focus    *Violation      // a violation's own window: drawn alone in red
	focusIDs map[string]bool // the holds its explanation names
}

func (c *canvas) x(t int64) float64 {
	t = max(c.from, min(t, c.to))
	return tlLeft + float64(t-c.from)/float64(c.to-c.from)*(tlWidth-tlLeft-tlRight)
}

func (c *canvas) sec(t int64) string { return fmt.Sprintf("%.3fs", float64(t-c.tl.t0)/1e9) }

func esc(s string) string { return html.EscapeString(s) }

// axis draws the time axis at y with ticks every nice step, labelled
// above the line if top, else below.
func (c *canvas) axis(y int, top bool) {
	span := float64(c.to-c.from) / 1e9
	step := niceStep(span / 10)
	fmt.Fprintf(c.b, `<g class="axis"><line x1="%d" y1="%d" x2="%d" y2="%d"/>`, tlLeft, y, tlWidth-tlRight, y)
	first := math.Ceil(float64(c.from-c.tl.t0)/1e9/step) * step
	for s := first; s <= float64(c.to-c.tl.t0)/1e9+1e-9; s += step {
		x := c.x(c.tl.t0 + int64(s*1e9))
		ty, ly := y+15, y+4
		if top {
			ty, ly = y-4, y+4
		}
		fmt.Fprintf(c.b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d"/><text x="%.1f" y="%d">%s</text>`, x, y, x, ly, x, ty, trimFloat(s)+"s")
	}
	c.b.WriteString("</g>\n")
}

func trimFloat(s float64) string {
	return strconv.FormatFloat(math.Round(s*1000)/1000, 'f', -1, 64)
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

// niceStep rounds d (seconds) up to 1, 2 or 5 times a power of ten.
func niceStep(d float64) float64 {
	if d <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

// drawFaults shades every fault across the lanes (stronger on its target's
// lane) and names it in the nemesis rows, which start at y0; lanes start at ly.
func (c *canvas) drawFaults(y0, ly, lh int, rows func(w string) [2]int) {
	c.b.WriteString(`<g class="faults">`)
	for i, f := range c.tl.h.Faults {
		end := f.End
		if end == math.MaxInt64 {
			end = c.tl.t1
		}
		if end < c.from || f.Start > c.to {
			continue
		}
		x0, x1 := c.x(f.Start), c.x(end)
		w := max(x1-x0, 2)
		col := faultColor(f.Fault)
		title := esc(fmt.Sprintf("%s %s: %s – %s (%s)", f.Fault, f.Target, c.sec(f.Start), c.sec(end), ms(end-f.Start)))
		row := min(c.tl.faultRow[i], c.tl.nemRows-1)
		fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.13"><title>%s</title></rect>`, x0, ly, w, lh, col, title)
		if wk := c.tl.faultWorker(f); wk != "" {
			r := rows(wk)
			fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.3"><title>%s</title></rect>`, x0, ly+r[0], w, r[1]-r[0], col, title)
		}
		ry := y0 + row*tlNemRow
		fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.8" rx="2"><title>%s</title></rect>`, x0, ry+1, w, tlNemRow-3, col, title)
		fmt.Fprintf(c.b, `<text class="fl" x="%.1f" y="%d">%s</text>`, x0+2, ry+tlNemRow-5, esc(faultLabel(f)))
	}
	c.b.WriteString("</g>\n")
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
		to := v.To
		if to == math.MaxInt64 || to < v.From {
			to = v.From
		}
		ws = append(ws, vspan{from: v.From, to: to, n: 1, anchor: WindowAnchor(tl.t0, v.From, v.To), checkers: []string{v.Checker}, detail: v.Checker + ": " + v.Detail})
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

// drawViolations draws the violations' windows in the violations row (each
// a link to its section when link is set) and, unless focus is set, shades
// them lightly across the lanes; focus, a violation, is drawn in full red
// across the lanes.
func (c *canvas) drawViolations(ly, lh int, link bool, focus *Violation) {
	c.b.WriteString(`<g class="viol">`)
	for _, w := range c.tl.vspans {
		if w.to < c.from || w.from > c.to {
			continue
		}
		x0, x1 := c.x(w.from), c.x(w.to)
		label := strings.Join(w.checkers, " ")
		if w.n > 1 {
			label += fmt.Sprintf(" ×%d", w.n)
		}
		title := w.detail
		if w.n > 1 {
			title += fmt.Sprintf(" (and %d more here)", w.n-1)
		}
		if link {
			fmt.Fprintf(c.b, `<a href="#%s">`, esc(w.anchor))
		}
		op := "1"
		if focus != nil {
			op = "0.35"
		}
		fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e00" opacity="%s"><title>%s</title></rect>`,
			x0, ly-tlViolRow+1, max(x1-x0, 3), tlViolRow-3, op, esc(title))
		if x1-x0 > float64(len(label))*6 || focus == nil {
			fmt.Fprintf(c.b, `<text class="vt" x="%.1f" y="%d">%s</text>`, x0+2, ly-4, esc(label))
		}
		if focus == nil && !link {
			fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e00" opacity="0.08"/>`, x0, ly, max(x1-x0, 3), lh)
		}
		if link {
			c.b.WriteString("</a>")
		}
	}
	if v := focus; v != nil {
		to := v.To
		if to == math.MaxInt64 || to < v.From {
			to = v.From
		}
		x0, x1 := c.x(v.From), c.x(to)
		fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e00" opacity="0.12" stroke="#e00" stroke-width="1.5"><title>%s</title></rect>`,
			x0, ly-tlViolRow+1, max(x1-x0, 3), lh+tlViolRow-1, esc(v.Checker+": "+v.Detail))
		fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e00"/><text class="vt" x="%.1f" y="%d">%s</text>`,
			x0, ly-tlViolRow+1, max(x1-x0, 3), tlViolRow-3, x0+2, ly-4, esc(v.Checker))
	}
	c.b.WriteString("</g>\n")
}

// detail draws every hold, wait, loss, release and state change in the
// window, with the faults and violations.
func (c *canvas) detail(caption string) {
	tl := c.tl
	nemH := tl.nemRows * tlNemRow
	ly := tlAxis + nemH + tlViolRow
	total := ly + tl.height + tlAxis
	fmt.Fprintf(c.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s">`+"\n",
		tlWidth, total, esc(caption))
	c.axis(tlAxis-6, true)
	fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">nemesis</text><text class="wl vl" x="4" y="%d">violations</text>`+"\n", tlAxis+12, tlAxis+nemH+11)
	for _, w := range tl.workers {
		r := tl.wlanes[w]
		fmt.Fprintf(c.b, `<rect class="wb" x="0" y="%d" width="%d" height="%d"/>`, ly+r[0], tlWidth, r[1]-r[0])
		fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">%s</text>`+"\n", ly+r[0]+11, esc(w))
	}
	for _, ln := range tl.lanes {
		fmt.Fprintf(c.b, `<text class="cl" x="%d" y="%d">c%d</text>`, tlLeft-4, ly+ln.y+10, ln.client)
	}
	c.b.WriteString("\n")
	c.drawFaults(tlAxis, ly, tl.height, func(w string) [2]int { return tl.wlanes[w] })
	// Failed Lock calls: a grey wait ending in a cross.
	c.b.WriteString(`<g class="fails">`)
	for id, o := range tl.h.Outcome {
		if o.Kind != KindFail {
			continue
		}
		inv, ok := tl.h.Invokes[id]
		ln := tl.lanes[o.Worker+"/"+strconv.Itoa(o.Client)]
		if !ok || ln == nil || o.T < c.from || inv.T > c.to {
			continue
		}
		y := float64(ly+ln.y) + tlSubLane/2
		fmt.Fprintf(c.b, `<line class="wait" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c.x(inv.T), y, c.x(o.T), y)
		fmt.Fprintf(c.b, `<text class="fx" x="%.1f" y="%.1f">×<title>%s</title></text>`, c.x(o.T)-3, y+4, esc(fmt.Sprintf("%s Lock on %s failed at %s: %s", id, o.Lock, c.sec(o.T), o.Err)))
	}
	c.b.WriteString("</g>\n<g class=\"holds\">")
	for _, a := range tl.h.Acqs {
		ln := tl.lanes[a.Worker+"/"+strconv.Itoa(a.Client)]
		busy := a.End
		if a.Released {
			busy = max(busy, a.RelT)
		}
		if busy == math.MaxInt64 {
			busy = tl.t1
		}
		if ln == nil || busy < c.from || a.Start > c.to {
			continue
		}
		c.hold(a, ln, ly)
	}
	c.b.WriteString("</g>\n<g class=\"states\">")
	for _, e := range tl.h.Events {
		if e.Kind != KindState || e.T < c.from || e.T > c.to {
			continue
		}
		ln := tl.lanes[e.Worker+"/"+strconv.Itoa(e.Client)]
		if ln == nil {
			continue
		}
		col := map[string]string{"suspended": "#f1a340", "expired": "#9467bd", "connected": "#2ca02c", "closed": "#999"}[e.Name]
		if col == "" {
			col = "#999"
		}
		x := c.x(e.T)
		y := float64(ly + ln.y)
		fmt.Fprintf(c.b, `<path d="M%.1f %.1fl3 3l-3 3l-3 -3z" fill="%s"><title>%s</title></path>`, x, y, col,
			esc(fmt.Sprintf("%s/%d session %#x %s at %s", e.Worker, e.Client, e.Session, e.Name, c.sec(e.T))))
	}
	c.b.WriteString("</g>\n")
	c.drawViolations(ly, tl.height, false, c.focus)
	c.axis(ly+tl.height+6, false)
	c.b.WriteString("</svg>\n")
}

// hold draws one acquisition: its wait, its bar (labelled with its token),
// the busy tail after a loss, and its release, loss or kill mark.
func (c *canvas) hold(a *Acq, ln *lane, ly int) {
	tl := c.tl
	y := float64(ly + ln.y)
	mid := y + tlSubLane/2
	end := a.End
	open := end == math.MaxInt64
	if open {
		end = tl.t1
	}
	fmt.Fprintf(c.b, `<g data-hold="%s">`, esc(a.ID))
	if a.Invoke > 0 && a.Invoke < a.Start {
		fmt.Fprintf(c.b, `<line class="wait" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c.x(a.Invoke), mid, c.x(a.Start), mid)
	}
	x0, x1 := c.x(a.Start), c.x(end)
	w := max(x1-x0, 1)
	col := lockColors[tl.locks[a.Lock]%len(lockColors)]
	kind := "exclusive"
	if a.Read {
		kind = "shared"
	}
	outcome := "released at " + c.sec(a.RelT)
	switch {
	case a.Killed:
		outcome = "process SIGKILLed at " + c.sec(a.End)
	case a.Lost:
		outcome = "lost at " + c.sec(a.LossT)
		if a.Released {
			outcome += ", released at " + c.sec(a.RelT)
		}
	case open:
		outcome = "never ended"
	}
	title := fmt.Sprintf("%s %s %s token %d session %#x node %s\nwaited %s, held %s – %s (%s), %s",
		a.ID, kind, a.Lock, a.Token, a.Session, a.Node, ms(a.Start-a.Invoke), c.sec(a.Start), c.sec(end), ms(end-a.Start), outcome)
	stroke := ""
	if c.focus == nil && tl.inViolation[a.ID] || c.focus != nil && c.focusIDs[a.ID] {
		stroke = ` stroke="#e00" stroke-width="2"`
	}
	op := ""
	if a.Read {
		op = ` fill-opacity="0.55"`
	}
	fmt.Fprintf(c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"%s%s><title>%s</title></rect>`, x0, y+1, w, tlSubLane-2, col, op, stroke, esc(title))
	if a.Lost && a.Released && a.RelT > a.LossT { // the lock stays busy until released
		fmt.Fprintf(c.b, `<rect class="tail" x="%.1f" y="%.1f" width="%.1f" height="%d"/>`, c.x(a.LossT), y+4, max(c.x(a.RelT)-c.x(a.LossT), 1), tlSubLane-8)
	}
	tok := strconv.FormatInt(a.Token, 10)
	if w >= float64(len(tok))*5.6+3 {
		fmt.Fprintf(c.b, `<text class="tok" x="%.1f" y="%.1f">%s</text>`, x0+2, y+10, tok)
	}
	switch {
	case a.Killed:
		fmt.Fprintf(c.b, `<text class="kx" x="%.1f" y="%.1f">✕</text>`, c.x(a.End)-4, y+11)
	case a.Lost:
		fmt.Fprintf(c.b, `<path class="loss" d="M%.1f %.1fl5 -9h-10z"><title>loss signal %s</title></path>`, c.x(a.LossT), y+11, c.sec(a.LossT))
	}
	if a.Released && (w >= 4 || a.Lost) {
		fmt.Fprintf(c.b, `<line class="rel" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c.x(a.RelT), y, c.x(a.RelT), y+tlSubLane)
	}
	c.b.WriteString("</g>\n")
}

// overview draws the whole run: per worker, the share of its clients'
// time spent holding, in 2 px bins; faults; violations (links to their
// windows); and the window pages (links).
func (c *canvas) overview(pages []page) {
	tl := c.tl
	rowH := 16
	nemH := tl.nemRows * tlNemRow
	ly := tlAxis + nemH + tlViolRow
	lh := len(tl.workers) * rowH
	total := ly + lh + tlAxis + 14
	fmt.Fprintf(c.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="overview">`+"\n", tlWidth, total)
	c.axis(tlAxis-6, true)
	fmt.Fprintf(c.b, `<text class="wl vl" x="4" y="%d">violations</text>`, tlAxis+nemH+11)
	for i, p := range pages { // the window pages, alternately shaded, each a link
		fill := "#f4f4f4"
		if i%2 == 1 {
			fill = "#e8e8e8"
		}
		fmt.Fprintf(c.b, `<a href="%s"><rect x="%.1f" y="%d" width="%.1f" height="12" fill="%s"><title>%s: %s – %s</title></rect></a>`,
			p.file, c.x(p.from), ly+lh+tlAxis, max(c.x(p.to)-c.x(p.from), 1), fill, p.file, c.sec(p.from), c.sec(p.to))
	}
	fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">pages</text>`, ly+lh+tlAxis+10)
	fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">nemesis</text>`+"\n", tlAxis+12)
	const bin = 2.0
	nb := int((tlWidth-tlLeft-tlRight)/bin) + 1
	per := float64(c.to-c.from) / float64(nb)
	for wi, w := range tl.workers {
		held := make([]float64, nb)
		nc := 0
		for _, ln := range tl.lanes {
			if ln.worker == w {
				nc++
			}
		}
		for _, a := range tl.h.Acqs {
			if a.Worker != w {
				continue
			}
			end := a.End
			if end == math.MaxInt64 {
				end = tl.t1
			}
			for i := int(float64(a.Start-c.from) / per); i < nb && float64(i)*per+float64(c.from) < float64(end); i++ {
				lo := max(float64(a.Start), float64(c.from)+float64(i)*per)
				hi := min(float64(end), float64(c.from)+float64(i+1)*per)
				if hi > lo {
					held[i] += (hi - lo) / per
				}
			}
		}
		y := ly + wi*rowH
		fmt.Fprintf(c.b, `<rect class="wb" x="0" y="%d" width="%d" height="%d"/><text class="wl" x="4" y="%d">%s</text>`, y, tlWidth, rowH-2, y+11, esc(w))
		for i, v := range held {
			if v <= 0 {
				continue
			}
			op := min(1, v/float64(max(nc, 1))*1.5+0.15)
			fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#4e79a7" opacity="%.2f"/>`, tlLeft+float64(i)*bin, y+1, bin, rowH-4, op)
		}
		c.b.WriteString("\n")
	}
	row := map[string]int{}
	for i, w := range tl.workers {
		row[w] = i
	}
	c.drawFaults(tlAxis, ly, lh, func(w string) [2]int { return [2]int{row[w] * rowH, row[w]*rowH + rowH - 2} })
	for _, a := range tl.h.Acqs { // losses and kills
		y := ly + row[a.Worker]*rowH
		switch {
		case a.Killed:
			fmt.Fprintf(c.b, `<text class="kx" x="%.1f" y="%d">✕<title>%s: process SIGKILLed while holding (token %d) at %s</title></text>`, c.x(a.End)-4, y+12, esc(a.ID), a.Token, c.sec(a.End))
		case a.Lost:
			fmt.Fprintf(c.b, `<path class="loss" d="M%.1f %dl5 -9h-10z"><title>%s: loss signal (token %d) at %s</title></path>`, c.x(a.LossT), y+11, esc(a.ID), a.Token, c.sec(a.LossT))
		}
	}
	c.drawViolations(ly, lh, true, nil)
	c.axis(ly+lh+6, false)
	c.b.WriteString("</svg>\n")
}

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

const tlStyle = `body{font:13px system-ui,sans-serif;margin:12px;color:#222}
h1{font-size:18px;margin:4px 0}h2{font-size:15px;margin:16px 0 4px}
svg{display:block;background:#fff;border:1px solid #ddd;margin:6px 0;width:100%;height:auto}
svg text{font:10px system-ui,sans-serif;fill:#333}
.axis line{stroke:#999}.axis text{text-anchor:middle;fill:#666}
.wb{fill:#fafafa;stroke:#eee}.wl{font-weight:bold}.cl{text-anchor:end;fill:#999}
.fl{fill:#fff;font-size:9px}.tok{fill:#fff;font-size:9px}
.wait{stroke:#aaa;stroke-width:1}.rel{stroke:#222;stroke-width:1.2}
.tail{fill:#e15759;opacity:.45}.loss{fill:#e15759;stroke:#900;stroke-width:.5}
.kx{fill:#000;font-size:12px;font-weight:bold}.fx{fill:#888;font-size:12px}
.vl{fill:#c00}.vt{fill:#fff;font-weight:bold;font-size:10px}
.viol-text{color:#c00;font-weight:bold}.ok{color:#2a7}
nav a{margin-right:12px}table{border-collapse:collapse}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:14px;height:10px;vertical-align:middle;margin-right:4px}`

func pageHead(b *strings.Builder, title string) {
	fmt.Fprintf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>%s</title><style>%s</style></head><body>\n", esc(title), tlStyle)
}

func (tl *timeline) legend(b *strings.Builder) {
	b.WriteString(`<p class="legend">`)
	var ls []string
	for l := range tl.locks {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	for _, l := range ls {
		fmt.Fprintf(b, `<span><i class="sw" style="background:%s"></i>%s</span>`, lockColors[tl.locks[l]%len(lockColors)], esc(l))
	}
	b.WriteString(`<span>bar: a hold (label: its token; light: shared); thin grey line: waiting in Lock; │ release; ▼ loss signal (red tail: lost but not yet released); ✕ process killed; × Lock failed; ◆ session state (amber suspended, purple expired, green connected)</span>`)
	b.WriteString(`<span>shaded columns: faults (stronger on the lane of their target; named in the nemesis row); red: a checker's violation window; hover anything for details</span></p>` + "\n")
}

// WriteTimeline renders h, with its violations vs, as HTML pages in dir
// (timeline.html and timeline-NNN.html) and returns timeline.html's path.
// name and title head the pages.
func WriteTimeline(dir, name, title string, h *History, vs []Violation) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tl := newTimeline(name, title, h, vs)
	pages := tl.pagesFor()
	for i, p := range pages {
		var b strings.Builder
		pageHead(&b, fmt.Sprintf("%s %s – %s", name, (&canvas{tl: tl}).sec(p.from), (&canvas{tl: tl}).sec(p.to)))
		c := &canvas{tl: tl, from: p.from, to: p.to, b: &b}
		fmt.Fprintf(&b, "<h1>%s: %s — %s to %s</h1>\n<nav>", esc(name), esc(title), c.sec(p.from), c.sec(p.to))
		if i > 0 {
			fmt.Fprintf(&b, `<a href="%s">← previous</a>`, pages[i-1].file)
		}
		fmt.Fprintf(&b, `<a href="%s">overview</a>`, TimelineFile)
		if i+1 < len(pages) {
			fmt.Fprintf(&b, `<a href="%s">next →</a>`, pages[i+1].file)
		}
		b.WriteString("</nav>\n")
		tl.legend(&b)
		c.detail(name + " " + p.file)
		b.WriteString("</body></html>\n")
		if err := os.WriteFile(filepath.Join(dir, p.file), []byte(b.String()), 0o644); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	pageHead(&b, name+" timeline")
	c := &canvas{tl: tl, from: tl.t0, to: tl.t1, b: &b}
	fmt.Fprintf(&b, "<h1>%s: %s</h1>\n", esc(name), esc(title))
	losses := 0
	for _, a := range h.Acqs {
		if a.Lost {
			losses++
		}
	}
	fmt.Fprintf(&b, "<p>%s of history; %d acquisitions, %d losses, %d faults, %d workers; ", c.sec(tl.t1), len(h.Acqs), losses, len(h.Faults), len(tl.workers))
	_, total, store, _ := Tally(vs)
	if total == 0 {
		b.WriteString(`<span class="ok">C1–C7: no violation</span>`)
	} else {
		fmt.Fprintf(&b, `<span class="viol-text">%d violations</span>`, total)
	}
	if store > 0 {
		fmt.Fprintf(&b, `; <span class="viol-text">acknowledged writes ZooKeeper forgot: %d (%s: the store's failure, not the lock's)</span>`, store, StoreChecker)
	}
	b.WriteString("</p>\n")
	b.WriteString("<h2>Overview</h2>\n<p>Each row is a worker process, darker where more of its clients held a lock; click a page strip (bottom) to see every hold of that window, or a red window to see its violation.</p>\n")
	c.overview(pages)
	if len(vs) > 0 {
		writeViolations(&b, tl, pages)
	}
	b.WriteString("<h2>Pages</h2>\n<p>")
	for _, p := range pages {
		fmt.Fprintf(&b, `<a href="%s">%s–%s</a> `, p.file, c.sec(p.from), c.sec(p.to))
	}
	b.WriteString("</p>\n")
	tl.legend(&b)
	b.WriteString("</body></html>\n")
	path := filepath.Join(dir, TimelineFile)
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// WriteIndex writes dir/index.html: one row per result, linking its
// timeline (Result.Timeline, made relative to dir).
func WriteIndex(dir, heading string, rs []Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	pageHead(&b, heading)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<table><tr><th>scenario</th><th>title</th><th>acquisitions</th><th>faults</th><th>losses</th><th>violations</th><th>seconds</th><th>timeline</th></tr>\n", esc(heading))
	for _, r := range rs {
		name := r.Name
		if r.Negative != "" {
			name = r.Negative + " under " + r.Name
		}
		link := "—"
		if r.Timeline != "" {
			rel, err := filepath.Rel(dir, r.Timeline)
			if err != nil {
				rel = r.Timeline
			}
			link = fmt.Sprintf(`<a href="%s">%s</a>`, esc(filepath.ToSlash(rel)), esc(filepath.ToSlash(rel)))
		}
		v := `<span class="ok">0</span>`
		if r.Total > 0 {
			v = fmt.Sprintf(`<span class="viol-text">%d (%s)</span>`, r.Total, PerChecker(r.Violations))
		}
		if r.StoreLosses > 0 {
			v += fmt.Sprintf(`; <span class="viol-text">%s=%d</span>`, StoreChecker, r.StoreLosses)
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%s</td><td>%.0f</td><td>%s</td></tr>\n",
			esc(name), esc(r.Title), r.Acquisitions, r.Faults, r.Losses, v, r.Seconds, link)
	}
	b.WriteString("</table>\n</body></html>\n")
	f, err := os.Create(filepath.Join(dir, "index.html"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	w.WriteString(b.String())
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// maxListed bounds the violations listed on timeline.html (report.json has
// them all).
const maxListed = 300

// writeViolations lists the violations: the first maxDetails distinct
// windows each drawn on their own, then a compact list; each distinct
// window is an element whose id is its anchor (WindowAnchor).
func writeViolations(b *strings.Builder, tl *timeline, pages []page) {
	fmt.Fprintf(b, "<h2>Violations</h2>\n")
	seen := map[string]bool{}
	details := 0
	listed := 0
	b.WriteString("<ul>\n")
	for i := range tl.vs {
		v := &tl.vs[i]
		id := "final"
		if v.From != 0 || v.To != 0 {
			id = WindowAnchor(tl.t0, v.From, v.To)
		}
		if listed == maxListed {
			fmt.Fprintf(b, "<li>… %d violations in all: see report.json</li>\n", len(tl.vs))
			break
		}
		listed++
		first := !seen[id]
		seen[id] = true
		idAttr := ""
		if first {
			idAttr = ` id="` + esc(id) + `"`
		}
		fmt.Fprintf(b, `<li%s><span class="viol-text">%s: %s</span> `, idAttr, esc(v.Checker), esc(v.Detail))
		if id == "final" {
			b.WriteString("(the state left after every client closed)</li>\n")
			continue
		}
		to := v.To
		if to == math.MaxInt64 || to < v.From {
			to = v.From
		}
		fmt.Fprintf(b, "[%s] ", esc(id))
		for _, p := range pages {
			if p.to >= v.From && p.from <= to {
				fmt.Fprintf(b, `<a href="%s">%s</a> `, p.file, p.file)
			}
		}
		if first && details < maxDetails {
			details++
			pad := max((to-v.From)/5, 100e6)
			d := &canvas{tl: tl, from: max(tl.t0, v.From-pad), to: min(tl.t1, to+pad), b: b, focus: v, focusIDs: map[string]bool{}}
			if d.to <= d.from {
				d.to = d.from + 1
			}
			for _, hid := range holdIDRe.FindAllString(v.Detail, -1) {
				d.focusIDs[hid] = true
			}
			d.detail(v.Checker + " " + id)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
}
