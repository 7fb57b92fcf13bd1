// The timeline's SVG: the layout in pixels, the colours, and the canvas that
// draws a stretch of a history, as the overview or as every hold (detail).

package reliability

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

const (
	tlWidth   = 1400 // SVG width in px
	tlLeft    = 90   // label column
	tlRight   = 10
	tlSubLane = 13 // px per client sub-lane
	tlNemRow  = 16 // px per nemesis row
	tlAxis    = 22
	tlViolRow = 15
)

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

func faultLabel(f Interval) string {
	t := f.Target
	if len(t) > 24 {
		t = "…" + t[len(t)-20:]
	}
	return f.Fault + " " + t
}

// canvas draws [from, to) of the history into b: detail draws every hold
// (a window page or a violation's window), overview the whole run.
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
		end := c.tl.orEnd(f.End)
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
		x0, x1 := c.x(v.From), c.x(windowEnd(v.From, v.To))
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
	c.drawLanes(ly)
	c.drawFaults(tlAxis, ly, tl.height, func(w string) [2]int { return tl.wlanes[w] })
	c.drawFails(ly)
	c.drawHolds(ly)
	c.drawStates(ly)
	c.drawViolations(ly, tl.height, false, c.focus)
	c.axis(ly+tl.height+6, false)
	c.b.WriteString("</svg>\n")
}

// drawLanes draws each worker's lane, labelled, and its clients' labels;
// the lanes start at ly.
func (c *canvas) drawLanes(ly int) {
	tl := c.tl
	for _, w := range tl.workers {
		r := tl.wlanes[w]
		fmt.Fprintf(c.b, `<rect class="wb" x="0" y="%d" width="%d" height="%d"/>`, ly+r[0], tlWidth, r[1]-r[0])
		fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">%s</text>`+"\n", ly+r[0]+11, esc(w))
	}
	for _, ln := range tl.lanes {
		fmt.Fprintf(c.b, `<text class="cl" x="%d" y="%d">c%d</text>`, tlLeft-4, ly+ln.y+10, ln.client)
	}
	c.b.WriteString("\n")
}

// drawFails draws the failed Lock calls in the window: a grey wait ending
// in a cross.
func (c *canvas) drawFails(ly int) {
	tl := c.tl
	c.b.WriteString(`<g class="fails">`)
	for id, o := range tl.h.Outcome {
		if o.Kind != KindFail {
			continue
		}
		inv, ok := tl.h.Invokes[id]
		ln := tl.lanes[laneKey(o.Worker, o.Client)]
		if !ok || ln == nil || o.T < c.from || inv.T > c.to {
			continue
		}
		y := float64(ly+ln.y) + tlSubLane/2
		fmt.Fprintf(c.b, `<line class="wait" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c.x(inv.T), y, c.x(o.T), y)
		fmt.Fprintf(c.b, `<text class="fx" x="%.1f" y="%.1f">×<title>%s</title></text>`, c.x(o.T)-3, y+4, esc(fmt.Sprintf("%s Lock on %s failed at %s: %s", id, o.Lock, c.sec(o.T), o.Err)))
	}
	c.b.WriteString("</g>\n")
}

// drawHolds draws every acquisition that keeps its lock busy at some time
// in the window.
func (c *canvas) drawHolds(ly int) {
	tl := c.tl
	c.b.WriteString(`<g class="holds">`)
	for _, a := range tl.h.Acqs {
		ln := tl.lanes[laneKey(a.Worker, a.Client)]
		busy := a.End
		if a.Released {
			busy = max(busy, a.RelT)
		}
		busy = tl.orEnd(busy)
		if ln == nil || busy < c.from || a.Start > c.to {
			continue
		}
		c.hold(a, ln, ly)
	}
	c.b.WriteString("</g>\n")
}

// stateColors colours the session states; any other is grey.
var stateColors = map[string]string{"suspended": "#f1a340", "expired": "#9467bd", "connected": "#2ca02c", "closed": "#999"}

// drawStates marks each session state change in the window with a diamond.
func (c *canvas) drawStates(ly int) {
	tl := c.tl
	c.b.WriteString(`<g class="states">`)
	for _, e := range tl.h.Events {
		if e.Kind != KindState || e.T < c.from || e.T > c.to {
			continue
		}
		ln := tl.lanes[laneKey(e.Worker, e.Client)]
		if ln == nil {
			continue
		}
		col := stateColors[e.Name]
		if col == "" {
			col = "#999"
		}
		x := c.x(e.T)
		y := float64(ly + ln.y)
		fmt.Fprintf(c.b, `<path d="M%.1f %.1fl3 3l-3 3l-3 -3z" fill="%s"><title>%s</title></path>`, x, y, col,
			esc(fmt.Sprintf("%s/%d session %#x %s at %s", e.Worker, e.Client, e.Session, e.Name, c.sec(e.T))))
	}
	c.b.WriteString("</g>\n")
}

// hold draws one acquisition: its wait, its bar (labelled with its token),
// the busy tail after a loss, and its release, loss or kill mark.
func (c *canvas) hold(a *Acq, ln *lane, ly int) {
	tl := c.tl
	y := float64(ly + ln.y)
	mid := y + tlSubLane/2
	open := a.End == math.MaxInt64
	end := tl.orEnd(a.End)
	fmt.Fprintf(c.b, `<g data-hold="%s">`, esc(a.ID))
	if a.Invoke > 0 && a.Invoke < a.Start {
		fmt.Fprintf(c.b, `<line class="wait" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, c.x(a.Invoke), mid, c.x(a.Start), mid)
	}
	x0, x1 := c.x(a.Start), c.x(end)
	w := max(x1-x0, 1)
	col := lockColors[tl.locks[a.Lock]%len(lockColors)]
	title := c.holdTitle(a, end, open)
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

// holdTitle is a hold's tooltip: what it held, how long it waited and
// held (until end; open if it never ended) and how it ended.
func (c *canvas) holdTitle(a *Acq, end int64, open bool) string {
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
	return fmt.Sprintf("%s %s %s token %d session %#x node %s\nwaited %s, held %s – %s (%s), %s",
		a.ID, kind, a.Lock, a.Token, a.Session, a.Node, ms(a.Start-a.Invoke), c.sec(a.Start), c.sec(end), ms(end-a.Start), outcome)
}

// The overview's rows: tlOverRow px per worker, cut into tlBin px bins.
const (
	tlOverRow = 16
	tlBin     = 2.0
)

// overview draws the whole run: per worker, the share of its clients'
// time spent holding, in 2 px bins; faults; violations (links to their
// windows); and the window pages (links).
func (c *canvas) overview(pages []page) {
	tl := c.tl
	nemH := tl.nemRows * tlNemRow
	ly := tlAxis + nemH + tlViolRow
	lh := len(tl.workers) * tlOverRow
	total := ly + lh + tlAxis + 14
	fmt.Fprintf(c.b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="overview">`+"\n", tlWidth, total)
	c.axis(tlAxis-6, true)
	fmt.Fprintf(c.b, `<text class="wl vl" x="4" y="%d">violations</text>`, tlAxis+nemH+11)
	c.drawPageStrips(pages, ly+lh+tlAxis)
	fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">nemesis</text>`+"\n", tlAxis+12)
	row := map[string]int{}
	for i, w := range tl.workers {
		c.drawShares(w, ly+i*tlOverRow)
		row[w] = i
	}
	c.drawFaults(tlAxis, ly, lh, func(w string) [2]int { return [2]int{row[w] * tlOverRow, row[w]*tlOverRow + tlOverRow - 2} })
	for _, a := range tl.h.Acqs { // losses and kills
		y := ly + row[a.Worker]*tlOverRow
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

// drawPageStrips draws the window pages at y, alternately shaded, each a
// link, and their row's label.
func (c *canvas) drawPageStrips(pages []page, y int) {
	for i, p := range pages {
		fill := "#f4f4f4"
		if i%2 == 1 {
			fill = "#e8e8e8"
		}
		fmt.Fprintf(c.b, `<a href="%s"><rect x="%.1f" y="%d" width="%.1f" height="12" fill="%s"><title>%s: %s – %s</title></rect></a>`,
			p.file, c.x(p.from), y, max(c.x(p.to)-c.x(p.from), 1), fill, p.file, c.sec(p.from), c.sec(p.to))
	}
	fmt.Fprintf(c.b, `<text class="wl" x="4" y="%d">pages</text>`, y+10)
}

// drawShares draws worker w's overview row at y: each bin darker the more
// of its clients' time in it was spent holding.
func (c *canvas) drawShares(w string, y int) {
	nc := 0
	for _, ln := range c.tl.lanes {
		if ln.worker == w {
			nc++
		}
	}
	fmt.Fprintf(c.b, `<rect class="wb" x="0" y="%d" width="%d" height="%d"/><text class="wl" x="4" y="%d">%s</text>`, y, tlWidth, tlOverRow-2, y+11, esc(w))
	for i, v := range c.held(w) {
		if v <= 0 {
			continue
		}
		op := min(1, v/float64(max(nc, 1))*1.5+0.15)
		fmt.Fprintf(c.b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#4e79a7" opacity="%.2f"/>`, tlLeft+float64(i)*tlBin, y+1, tlBin, tlOverRow-4, op)
	}
	c.b.WriteString("\n")
}

// held returns, for each bin of the overview, how much of it worker w's
// holds cover, summed over its clients (in bin lengths).
func (c *canvas) held(w string) []float64 {
	nb := int((tlWidth-tlLeft-tlRight)/tlBin) + 1
	per := float64(c.to-c.from) / float64(nb)
	held := make([]float64, nb)
	for _, a := range c.tl.h.Acqs {
		if a.Worker != w {
			continue
		}
		end := c.tl.orEnd(a.End)
		for i := int(float64(a.Start-c.from) / per); i < nb && float64(i)*per+float64(c.from) < float64(end); i++ {
			lo := max(float64(a.Start), float64(c.from)+float64(i)*per)
			hi := min(float64(end), float64(c.from)+float64(i+1)*per)
			if hi > lo {
				held[i] += (hi - lo) / per
			}
		}
	}
	return held
}
