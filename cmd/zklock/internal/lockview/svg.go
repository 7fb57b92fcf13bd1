package lockview

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"
)

// The timeline's geometry, in SVG user units.
const (
	svgWidth = 960
	svgLabel = 220 // the labels' column
	svgRow   = 24
	svgAxis  = 22
)

// timelineSVG draws a history as SVG, one row per span: its wait (from
// queued to held) and its hold (from held to its end, or to now), with a
// mark where it ended (released, lost, gave up, deleted); a tooltip gives
// each one's times and token. Colours come from the stylesheet's classes
// (the page's CSP allows no inline style).
func timelineSVG(h History) template.HTML {
	plot := float64(svgWidth - svgLabel - 10)
	span := h.To.Sub(h.From)
	if span <= 0 {
		span = time.Second
	}
	x := func(t time.Time) float64 {
		if t.Before(h.From) {
			t = h.From
		}
		return svgLabel + plot*float64(t.Sub(h.From))/float64(span)
	}
	height := svgAxis + svgRow*max(len(h.Rows), 1) + 4
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="history" role="img" viewBox="0 0 %d %d" width="100%%" preserveAspectRatio="xMinYMin meet" aria-labelledby="history-title">`, svgWidth, height)
	fmt.Fprintf(&b, `<title id="history-title">%s</title>`, esc(fmt.Sprintf("Who queued and held %s from %s to %s", "the lock", clockOf(h.From), clockOf(h.To))))
	for _, t := range ticks(h.From, h.To) {
		fmt.Fprintf(&b, `<line class="tick" x1="%.1f" x2="%.1f" y1="%d" y2="%d"/><text class="axis" x="%.1f" y="14" text-anchor="middle">%s</text>`,
			x(t), x(t), svgAxis-4, height, x(t), clockOf(t))
	}
	if len(h.Rows) == 0 {
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%d">No one queued or held in this window.</text>`, svgLabel, svgAxis+16)
	}
	for i, s := range h.Rows {
		y := svgAxis + i*svgRow
		label := s.ID
		if label == "" {
			label = shortName(s.Node)
		}
		if len([]rune(label)) > 24 {
			label = string([]rune(label)[:23]) + "…"
		}
		if s.Token != 0 {
			label += fmt.Sprintf(" · %d", s.Token)
		}
		fmt.Fprintf(&b, `<g class="span" data-node="%s">`, esc(s.Node))
		fmt.Fprintf(&b, `<text class="label" x="%d" y="%d">%s</text>`, svgLabel-8, y+16, esc(label))
		end := s.End
		if end.IsZero() {
			end = h.To
		}
		if !s.Queued.IsZero() {
			wend := end
			if !s.Held.IsZero() {
				wend = s.Held
			}
			bar(&b, "wait", x(s.Queued), x(wend), y, fmt.Sprintf("%s waited %s–%s (%s)", nameOf(s), clockOf(s.Queued), clockOf(wend), wend.Sub(s.Queued).Round(time.Millisecond)))
		}
		if !s.Held.IsZero() {
			bar(&b, "held", x(s.Held), x(end), y, fmt.Sprintf("%s held %s–%s (%s), fencing token %d", nameOf(s), clockOf(s.Held), clockOf(end), end.Sub(s.Held).Round(time.Millisecond), s.Token))
		}
		if !s.End.IsZero() {
			fmt.Fprintf(&b, `<line class="end %s" x1="%.1f" x2="%.1f" y1="%d" y2="%d"><title>%s</title></line>`,
				esc(s.How), x(s.End), x(s.End), y+3, y+svgRow-3, esc(s.How+" at "+clockOf(s.End)))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// bar draws one span's part from x0 to x1 (at least 2 units wide).
func bar(b *strings.Builder, class string, x0, x1 float64, y int, title string) {
	fmt.Fprintf(b, `<rect class="%s" x="%.1f" y="%d" width="%.1f" height="%d" rx="2" data-from="%.1f" data-to="%.1f"><title>%s</title></rect>`,
		class, x0, y+5, max(x1-x0, 2), svgRow-10, x0, x1, esc(title))
}

// sparkSVG draws holds per minute as bars, the oldest first.
func sparkSVG(counts []int) template.HTML {
	top := 1
	for _, c := range counts {
		top = max(top, c)
	}
	total := 0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="spark" viewBox="0 0 %d 16" width="%d" height="16" role="img">`, 3*len(counts), 3*len(counts))
	for i, c := range counts {
		total += c
		if c > 0 {
			h := max(14*c/top, 2)
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="2" height="%d"/>`, 3*i, 16-h, h)
		}
	}
	fmt.Fprintf(&b, `<title>%d holds in the last %d minutes (one bar a minute)</title></svg>`, total, len(counts))
	return template.HTML(b.String())
}

// ticks are 4 to 10 round times between from and to.
func ticks(from, to time.Time) []time.Time {
	steps := []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
		10 * time.Minute, 30 * time.Minute, time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if to.Sub(from)/s <= 8 {
			step = s
			break
		}
	}
	var out []time.Time
	for t := from.Truncate(step).Add(step); t.Before(to); t = t.Add(step) {
		out = append(out, t)
	}
	return out
}

func nameOf(s Span) string {
	if s.ID != "" {
		return s.ID
	}
	return shortName(s.Node)
}

func clockOf(t time.Time) string { return t.Local().Format("15:04:05") }

func esc(s string) string { return html.EscapeString(s) }
