package bench

import (
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The HTML report: one self-contained page (inline CSS and SVG, no
// scripts, nothing fetched), well-formed XML so that a test can parse it.

// WriteHTML writes the report's page to path; jsonName is the raw numbers'
// file name, linked from the page (written beside it by WriteJSON).
func (r *Report) WriteHTML(path, jsonName string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(r.HTML(jsonName)), 0o644)
}

// colors of the targets in every chart; zklock stands out.
var colors = map[string]string{
	ZklockMutex: "#1565c0", CuratorMutex: "#ef6c00", GoZKLock: "#2e7d32", KazooLock: "#8e24aa",
	FloorCycle: "#9e9e9e", FloorPipelined: "#616161", FloorHandoff: "#9e9e9e", FloorListed: "#616161",
}

func colorOf(target string) string {
	if c, ok := colors[target]; ok {
		return c
	}
	return "#b0bec5"
}

func esc(s string) string { return html.EscapeString(s) }

// HTML renders the report page.
func (r *Report) HTML(jsonName string) string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head>
<meta charset="utf-8"/>
<title>zklock benchmarks</title>
<style>
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1240px; color: #212121; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.9em; }
td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f5f5f5; } td.name, th.name { text-align: left; }
td.good { background: #c8e6c9; } td.fair { background: #fff9c4; } td.bad { background: #ffcdd2; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
.chart { border: 1px solid #e0e0e0; padding: 4px; }
.met { color: #2e7d32; font-weight: bold; } .notmet { color: #c62828; font-weight: bold; } .unresolved { color: #f57f17; font-weight: bold; }
small { color: #555; }
.legend span { display: inline-block; margin-right: 1.2em; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: middle; }
</style>
</head>
<body>
<h1>zklock benchmarks</h1>
`)
	fmt.Fprintf(&b, "<p>Run started %s, took %v; medians of %d interleaved repetitions; code %s. Raw numbers: <a href=\"%s\">%s</a>.</p>\n",
		esc(r.Started.Format(time.RFC3339)), r.Elapsed.Round(time.Second), r.Config.Reps, esc(dash(r.Revision)), esc(jsonName), esc(jsonName))
	fmt.Fprintf(&b, "<p id=\"releases\">%s.</p>\n", esc(r.releaseLine()))
	b.WriteString("<p>Workloads: <b>uncontended</b> (one session, acquire+release cycles), <b>contended</b> (" +
		fmt.Sprint(r.Config.Contenders) + " sessions, one goroutine each), <b>inprocess</b> (" + fmt.Sprint(r.Config.Goroutines) +
		" goroutines on one session); -rttN: through a proxy adding N ms per round trip; ensemble-: against a 3-member ensemble, sessions spread over members. " +
		"Floors: <b>floor</b> = create, list, delete (uncontended) or delete → watch notification (contended); " +
		"<b>pipelined-floor</b> = create and list sent together, then delete; <b>listed-floor</b> = delete → notification → list → next holds.</p>\n")
	b.WriteString(legend())

	b.WriteString("<h2 id=\"ratios\">Where zklock stands: zklock's throughput over each peer's</h2>\n<p>Each cell: the median of the per-repetition ratios (repetition i of zklock over repetition i of the peer) and its 95% interval for another run's median: where a run of the same code with as many repetitions should find its median (the spread of a median estimated from the repetitions, on the ratios' logarithm, never narrower than benchmath's interval of this run's median, which benchstat prints and which is below each cell; it needs 6 repetitions or more).</p>\n")
	r.ratioTable(&b)
	b.WriteString("<h2 id=\"goals\">Goals</h2>\n<p>Judged on 95% intervals: met only when the whole interval clears the goal, NOT MET only when it is wholly on the wrong side, otherwise unresolved, with the repetitions (or events) that would resolve it if they spread as these did.</p>\n<ul>\n")
	for _, g := range r.goalResults() {
		fmt.Fprintf(&b, "<li>%s: %s %s</li>\n", esc(g.Name), goalMark(g.Verdict), esc(g.Detail))
	}
	b.WriteString("</ul>\n")

	b.WriteString("<h2 id=\"workloads\">Throughput and p99 per workload</h2>\n<div class=\"charts\">\n")
	for _, w := range r.workloads() {
		fmt.Fprintf(&b, "<div class=\"chart\" id=\"w-%s\">\n%s</div>\n", esc(w.name), r.workloadChart(w))
	}
	b.WriteString("</div>\n")

	b.WriteString("<h2 id=\"herd\">Handoffs/s against waiters (one session, N waiters each taking the lock once)</h2>\n<div class=\"charts\">\n")
	b.WriteString("<div class=\"chart\">" + r.herdChart(func(rec Record) float64 { return rec.PerSec }, "handoffs/s") + "</div>\n")
	b.WriteString("<div class=\"chart\">" + r.herdChart(func(rec Record) float64 { return rec.RequestsPerHandoff }, "requests per handoff") + "</div>\n")
	b.WriteString("</div>\n")

	b.WriteString("<h2 id=\"rtt\">Against the added round-trip time (standalone server)</h2>\n<div class=\"charts\">\n")
	for _, m := range []string{measureUnc, measureCont, measureGorout} {
		b.WriteString("<div class=\"chart\">" + r.rttChart(m) + "</div>\n")
	}
	b.WriteString("</div>\n")
	r.censusHTML(&b)
	r.versionsHTML(&b)
	r.failoverHTML(&b)
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

func goalMark(verdict string) string {
	switch verdict {
	case Met:
		return `<span class="met">met</span>`
	case NotMet:
		return `<span class="notmet">NOT MET</span>`
	}
	return `<span class="unresolved">unresolved</span>`
}

func legend() string {
	var b strings.Builder
	b.WriteString("<p class=\"legend\">")
	for _, t := range []string{ZklockMutex, CuratorMutex, GoZKLock, KazooLock, FloorCycle + " / " + FloorHandoff, FloorPipelined + " / " + FloorListed} {
		c := colorOf(strings.Fields(t)[0])
		fmt.Fprintf(&b, "<span><i style=\"background:%s\"></i>%s</span>", c, esc(t))
	}
	b.WriteString("</p>\n")
	return b.String()
}

// ratioTable: a row per workload, a column per peer, coloured.
func (r *Report) ratioTable(b *strings.Builder) {
	cols := []string{"curator", "gozk", "kazoo", "floor", "pipelined-floor", "listed-floor"}
	b.WriteString("<table>\n<tr><th class=\"name\">workload</th>")
	for _, c := range cols {
		fmt.Fprintf(b, "<th>zklock/%s</th>", esc(c))
	}
	b.WriteString("</tr>\n")
	ivs := r.ratioStats()
	for _, w := range r.workloads() {
		fmt.Fprintf(b, "<tr><td class=\"name\"><a href=\"#w-%s\">%s</a></td>", esc(w.name), esc(w.name))
		for _, c := range cols {
			iv, ok := ivs[w.name+" zklock/"+c]
			v := iv.X
			class := "bad"
			switch {
			case !ok:
				class = ""
			case v >= 1.0:
				class = "good"
			case v >= 0.9:
				class = "fair"
			}
			cell := num(v, ok, "%.2f")
			if ok {
				cell += fmt.Sprintf("<br/><small>[%s, %s]</small>", bound(iv.Lo), bound(iv.Hi))
				if iv.Repeat {
					cell += fmt.Sprintf("<br/><small>CI [%s, %s]</small>", bound(iv.CILo), bound(iv.CIHi))
				}
			}
			fmt.Fprintf(b, "<td class=\"%s\">%s</td>", class, cell)
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}

// workload is one measure in one setting.
type workload struct {
	name    string
	cell    cellOf
	measure string
}

func (r *Report) workloads() []workload {
	var out []workload
	for _, l := range ratioLines(r.Records) {
		if len(out) == 0 || out[len(out)-1].name != l.workload {
			out = append(out, workload{l.workload, l.cell, l.measure})
		}
	}
	return out
}
