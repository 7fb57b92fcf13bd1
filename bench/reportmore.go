package bench

import (
	"fmt"
	"math"
	"strings"
)

// censusHTML: the request census's detail, as printCensus writes it.
func (r *Report) censusHTML(b *strings.Builder) {
	rows := r.censusRows()
	if len(rows) == 0 {
		return
	}
	b.WriteString("<h2 id=\"census\">Request census: what each operation asks, of which member, and what a session waits on</h2>\n")
	fmt.Fprintf(b, "<p>Per operation (cycle uncontended, handoff contended with %d sessions), counted by relays in front of each server. "+
		"By member: reads/writes per operation sent to that member (a follower forwards writes to the leader). "+
		"Waited: requests sent in the window (uncontended: create to the releasing delete; contended: the waking notification to that delete) whose reply came before the delete left; "+
		"stages: sequential round trips among them; off path: requests whose reply came later; contended-held: each holder holds %v, the window ends when it holds, and while held lists what it sent holding. Times are medians in ms.</p>\n", r.Config.Contenders, censusHold)
	b.WriteString("<table>\n<tr><th class=\"name\">target</th><th>setup</th><th>measure</th><th>req/op</th><th>reads</th><th>writes</th><th>other</th><th>notif</th><th class=\"name\">by member</th>" +
		"<th>waited</th><th>stages</th><th>off path</th><th class=\"name\">waited on</th><th class=\"name\">off the path</th><th class=\"name\">while held</th><th>delete→wake</th><th>wake→hold</th><th>release rtt</th></tr>\n")
	for _, rec := range rows {
		c := rec.Census
		weight := ""
		if rec.Target == ZklockMutex {
			weight = " style=\"font-weight:bold\""
		}
		fmt.Fprintf(b, "<tr%s><td class=\"name\">%s</td><td>%s</td><td>%s</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td class=\"name\">%s</td>",
			weight, esc(rec.Target), esc(rec.Setup), esc(strings.TrimPrefix(rec.Measure, censusPrefix)), rec.RequestsPerHandoff, c.Reads, c.Writes, c.Other, rec.NotificationsPerHandoff, esc(memberText(c)))
		if p := c.Path; p != nil {
			fmt.Fprintf(b, "<td>%.2f</td><td>%.2f</td><td>%.2f</td><td class=\"name\">%s</td><td class=\"name\">%s</td><td class=\"name\">%s</td><td>%s</td><td>%s</td><td>%.3f</td>",
				p.Waited, p.Stages, p.OffPath, esc(opsText(p.WaitedOps)), esc(opsText(p.OffPathOps)), esc(opsText(p.DuringHold)),
				num(p.DeleteToWakeMs, p.DeleteToWakeMs > 0, "%.3f"), num(p.WakeToHoldMs, p.WakeToHoldMs > 0, "%.3f"), p.ReleaseMs)
		} else {
			b.WriteString(strings.Repeat("<td>-</td>", 9))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// failoverHTML: the failover table and, per case, the events' gaps.
func (r *Report) failoverHTML(b *strings.Builder) {
	f := r.Failover
	if f == nil {
		return
	}
	b.WriteString("<h2 id=\"failover\">Time without a leader</h2>\n")
	fmt.Fprintf(b, "<p>A 3-member ensemble (tick %v), every leader's session timeout %v; zklock's loss limits %s (graceful and kill9 at the first), Curator at its default connection-state error policy (standard). "+
		"Per event, the time with no live term from the event on, and the terms started (changes of leader); moved: how long the first leader's connection was down; silent: how long its session had not heard a server then (what a loss limit counts; zklock's only). "+
		"Timestamps: CLOCK_MONOTONIC read in each process (Java's System.nanoTime reads it), checked against the driver's at each process start.</p>\n",
		f.Tick, f.SessionTimeout, esc(strings.Join(lossLabels(f), ", ")))
	b.WriteString("<table>\n<tr><th class=\"name\">case</th><th class=\"name\">recipe</th><th>loss</th><th>events</th><th>median [95% interval] ms</th><th>p50</th><th>p99</th><th>changes/event</th><th>max</th><th>moved p50</th><th>silent p50</th><th>overlap</th></tr>\n")
	for _, s := range f.summaries() {
		iv := medianInterval(s.Gaps)
		fmt.Fprintf(b, "<tr><td class=\"name\">%s</td><td class=\"name\">%s</td><td>%s</td><td>%d</td><td>%.2f <small>[%s, %s]</small></td><td>%.2f</td><td>%.2f</td><td>%.2f</td><td>%.0f</td><td>%s</td><td>%s</td><td>%.2f</td></tr>\n",
			esc(s.Case), esc(s.Recipe), esc(dash(s.Loss)), len(s.Gaps), iv.X, bound(iv.Lo), bound(iv.Hi), percentile(s.Gaps, 50), percentile(s.Gaps, 99),
			mean(s.Changes), percentile(s.Changes, 100), pct(s.Moved, 50), pct(s.Silent, 50), s.MaxOverlap)
	}
	b.WriteString("</table>\n<div class=\"charts\">\n")
	for _, c := range failoverCases {
		var ss []*failSummary
		for _, s := range f.summaries() {
			if s.Case == c {
				ss = append(ss, s)
			}
		}
		if len(ss) > 0 {
			fmt.Fprintf(b, "<div class=\"chart\" id=\"f-%s\">\n%s</div>\n", esc(c), gapChart(c, ss))
		}
	}
	b.WriteString("</div>\n")
}

// gapChart: per recipe, every event's gap as a dot, the median as a bar.
func gapChart(kase string, ss []*failSummary) string {
	const labelW, panelW, rowH, top = 190, 330, 18, 34
	maxGap := 0.0
	for _, s := range ss {
		for _, g := range s.Gaps {
			maxGap = math.Max(maxGap, g)
		}
	}
	maxGap = niceCeil(maxGap)
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-size=\"11\">\n", labelW+panelW+60, top+rowH*len(ss)+8)
	fmt.Fprintf(&b, "<text x=\"4\" y=\"13\" font-weight=\"bold\" font-size=\"13\">%s</text>\n", esc(kase))
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"28\" fill=\"#555\">ms without a leader, 0 to %s (bar: median; dots: events)</text>\n", labelW, esc(short(maxGap)))
	for i, s := range ss {
		y := top + i*rowH
		name := s.Recipe
		if s.Loss != "" {
			name += " loss=" + s.Loss
		}
		color := colorOf(CuratorMutex)
		switch {
		case strings.HasPrefix(s.Recipe, "zklock"):
			color = colorOf(ZklockMutex)
		case s.Recipe == recipeFloor:
			color = colorOf(FloorHandoff)
		}
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", labelW-6, y+12, esc(name))
		w := scale(median(s.Gaps), maxGap, panelW)
		fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" fill-opacity=\"0.45\"/>\n", labelW, y+3, w, rowH-7, color)
		for _, g := range s.Gaps {
			fmt.Fprintf(&b, "<circle cx=\"%.1f\" cy=\"%d\" r=\"2\" fill=\"%s\"/>\n", float64(labelW)+scale(g, maxGap, panelW), y+rowH/2, color)
		}
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", float64(labelW)+float64(panelW)+4, y+12, esc(fmt.Sprintf("%.1f", median(s.Gaps))))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
