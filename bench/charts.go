package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The HTML report's charts: inline SVG, drawn from the records.

// workloadChart: horizontal bars per target, throughput left, p99 right.
func (r *Report) workloadChart(w workload) string {
	type bar struct {
		target   string
		ops, p99 float64
	}
	var bars []bar
	for _, t := range r.targets() {
		if floor(t) && !slices.ContainsFunc(peersOf(w.measure), func(p peer) bool { return p.target == t }) {
			continue
		}
		m := floorMeasure(t, w.measure)
		v, ok := medianOf(r.Records, w.cell, t, m, perSec)
		if !ok {
			continue
		}
		p, _ := medianOf(r.Records, w.cell, t, m, func(x *Run) float64 { return float64(x.P99) / float64(time.Millisecond) })
		bars = append(bars, bar{t, v, p})
	}
	const labelW, panelW, rowH, top = 128, 170, 18, 34
	width := labelW + 2*panelW + 2*55
	height := top + rowH*len(bars) + 8
	unit := "handoffs/s"
	if w.measure == measureUnc {
		unit = "cycles/s"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"11\">\n", width, height)
	fmt.Fprintf(&b, "<text x=\"4\" y=\"13\" font-weight=\"bold\" font-size=\"13\">%s</text>\n", esc(w.name))
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"28\" fill=\"#555\">%s</text>\n", labelW, esc(unit))
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"28\" fill=\"#555\">p99 ms (%s)</text>\n", labelW+panelW+55, esc(map[bool]string{true: "cycle", false: "acquire wait"}[w.measure == measureUnc]))
	var maxOps, maxP99 float64
	for _, x := range bars {
		maxOps, maxP99 = math.Max(maxOps, x.ops), math.Max(maxP99, x.p99)
	}
	for i, x := range bars {
		y := top + i*rowH
		weight := "normal"
		if x.target == ZklockMutex {
			weight = "bold"
		}
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-weight=\"%s\">%s</text>\n", labelW-6, y+12, weight, esc(x.target))
		ow := scale(x.ops, maxOps, panelW)
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n", labelW, y+2, ow, rowH-5, colorOf(x.target))
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", float64(labelW)+ow+3, y+12, esc(fmt.Sprintf("%.0f", x.ops)))
		pw := scale(x.p99, maxP99, panelW)
		px := labelW + panelW + 55
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"0.55\"/>\n", px, y+2, pw, rowH-5, colorOf(x.target))
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", float64(px)+pw+3, y+12, esc(fmt.Sprintf("%.2f", x.p99)))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func scale(v, maxV float64, w int) float64 {
	if maxV <= 0 || v <= 0 {
		return 0
	}
	return v / maxV * float64(w)
}

// series is one line of a line chart: a value per x category (NaN: none).
type series struct {
	name string
	ys   []float64
}

// A line chart's size and margins, in pixels.
const (
	lineW, lineH                             = 400, 260
	lineLeft, lineRight, lineTop, lineBottom = 62, 130, 26, 34
)

// lineFrame is a line chart's plot area and scales.
type lineFrame struct {
	pw, ph float64 // the plot area's width and height
	nx     int     // x categories
	yOf    func(float64) float64
	ticks  []float64 // the y values marked
}

// xAt is the x coordinate of category i.
func (c lineFrame) xAt(i int) float64 {
	if c.nx == 1 {
		return float64(lineLeft) + c.pw/2
	}
	return float64(lineLeft) + c.pw*float64(i)/float64(c.nx-1)
}

// yAt is the y coordinate of value v.
func (c lineFrame) yAt(v float64) float64 { return float64(lineTop) + c.ph - c.yOf(v) }

// lineChart draws series over categorical x values, y linear from 0 or,
// with logY, logarithmic (for figures that span decades).
func lineChart(title, yLabel string, xs []string, ss []series, logY bool) string {
	c := lineFrame{pw: float64(lineW - lineLeft - lineRight), ph: float64(lineH - lineTop - lineBottom), nx: len(xs)}
	c.yOf, c.ticks = yScale(ss, logY, c.ph)
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"11\">\n", lineW, lineH)
	fmt.Fprintf(&b, "<text x=\"4\" y=\"14\" font-weight=\"bold\" font-size=\"13\">%s</text>\n", esc(title))
	if logY {
		yLabel += " (log scale)"
	}
	c.axes(&b, yLabel, xs)
	for si, s := range ss {
		c.line(&b, si, s)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// yScale maps values to heights above the axis, 0..ph, and picks the
// values to mark: linear from 0 to a round maximum or, with logY (and a
// positive value), logarithmic over whole decades.
func yScale(ss []series, logY bool, ph float64) (func(float64) float64, []float64) {
	maxY, minY := 0.0, math.Inf(1)
	for _, s := range ss {
		for _, y := range s.ys {
			if !math.IsNaN(y) {
				maxY = math.Max(maxY, y)
				if y > 0 {
					minY = math.Min(minY, y)
				}
			}
		}
	}
	maxY = niceCeil(maxY)
	if logY && !math.IsInf(minY, 1) {
		return logScale(minY, maxY, ph)
	}
	var ticks []float64
	n := 4
	if m := maxY / math.Pow(10, math.Floor(math.Log10(maxY))); m > 4.5 && m < 5.5 {
		n = 5 // 5 × 10^k: steps of 10^k
	}
	for k := 0; k <= n; k++ {
		ticks = append(ticks, maxY*float64(k)/float64(n))
	}
	return func(v float64) float64 { return scale(v, maxY, int(ph)) }, ticks
}

// logScale is yScale's logarithmic scale from the decade of minY to that
// of maxY, marked at 1, 2 and 5 times each power of ten.
func logScale(minY, maxY, ph float64) (func(float64) float64, []float64) {
	lo := math.Pow(10, math.Floor(math.Log10(minY)))
	hi := math.Pow(10, math.Ceil(math.Log10(maxY)))
	if hi <= lo {
		hi = lo * 10
	}
	yOf := func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return (math.Log10(v) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo)) * ph
	}
	var ticks []float64
	for p := lo; p <= hi*1.001; p *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if p*m <= hi*1.001 {
				ticks = append(ticks, p*m)
			}
		}
	}
	return yOf, ticks
}

// axes draws the y label, the grid lines with their values and the x
// categories.
func (c lineFrame) axes(b *strings.Builder, yLabel string, xs []string) {
	fmt.Fprintf(b, "<text x=\"12\" y=\"%d\" fill=\"#555\" text-anchor=\"middle\" transform=\"rotate(-90 12 %d)\">%s</text>\n", lineTop+int(c.ph/2), lineTop+int(c.ph/2), esc(yLabel))
	for _, v := range c.ticks {
		y := c.yAt(v)
		fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e0e0e0\"/>\n", lineLeft, y, float64(lineLeft)+c.pw, y)
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", lineLeft-4, y+4, esc(short(v)))
	}
	for i, x := range xs {
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", c.xAt(i), lineH-lineBottom+14, esc(x))
	}
}

// line draws series s, the si-th: its points, the line through them and
// its legend entry (zklock's line thick, the floors' dashed).
func (c lineFrame) line(b *strings.Builder, si int, s series) {
	var pts []string
	for i, y := range s.ys {
		if math.IsNaN(y) {
			continue
		}
		yy := c.yAt(y)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", c.xAt(i), yy))
		fmt.Fprintf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", c.xAt(i), yy, colorOf(s.name))
	}
	sw := "1.5"
	if s.name == ZklockMutex {
		sw = "3"
	}
	dash := ""
	if floor(s.name) {
		dash = " stroke-dasharray=\"4 3\""
	}
	fmt.Fprintf(b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n", strings.Join(pts, " "), colorOf(s.name), sw, dash)
	ly := lineTop + 10 + si*15
	fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"%s/>\n", lineW-lineRight+8, ly-4, lineW-lineRight+24, ly-4, colorOf(s.name), sw, dash)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\">%s</text>\n", lineW-lineRight+28, ly, esc(s.name))
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func short(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fk", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fk", v/1000)
	case v >= 10 || v == 0:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func (r *Report) herdChart(f func(Record) float64, label string) string {
	xs := make([]string, len(r.Config.Herd))
	for i, n := range r.Config.Herd {
		xs[i] = fmt.Sprint(n)
	}
	var ss []series
	for _, t := range r.targets() {
		s := series{name: t, ys: make([]float64, len(r.Config.Herd))}
		any := false
		for i, n := range r.Config.Herd {
			s.ys[i] = math.NaN()
			for _, rec := range r.Records {
				if rec.Target == t && rec.Measure == measureHerd && rec.Waiters == n && rec.Run != nil {
					s.ys[i], any = f(rec), true
				}
			}
		}
		if any {
			ss = append(ss, s)
		}
	}
	return lineChart(label+" against waiters", label, xs, ss, false)
}

// rttChart: throughput of one measure at each added round trip.
func (r *Report) rttChart(measure string) string {
	var rtts []float64
	for _, c := range r.cells() {
		if c.setup == Standalone && !slices.Contains(rtts, c.rtt) {
			rtts = append(rtts, c.rtt)
		}
	}
	slices.Sort(rtts)
	xs := make([]string, len(rtts))
	for i, v := range rtts {
		xs[i] = fmt.Sprintf("%g ms", v)
	}
	var ss []series
	for _, t := range r.targets() {
		if floor(t) && !slices.ContainsFunc(peersOf(measure), func(p peer) bool { return p.target == t }) {
			continue
		}
		s := series{name: t, ys: make([]float64, len(rtts))}
		n := 0
		for i, rtt := range rtts {
			v, ok := medianOf(r.Records, cellOf{Standalone, rtt}, t, floorMeasure(t, measure), perSec)
			s.ys[i] = math.NaN()
			if ok {
				s.ys[i] = v
				n++
			}
		}
		if n > 1 { // measured at more than one round trip
			ss = append(ss, s)
		}
	}
	unit := "handoffs/s"
	if measure == measureUnc {
		unit = "cycles/s"
	}
	return lineChart(workloadName(direct, measure)+" against round trip", unit, xs, ss, true)
}
