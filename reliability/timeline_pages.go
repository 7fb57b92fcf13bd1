// The timeline's HTML pages: timeline.html (overview, violations, links),
// the window pages timeline-NNN.html (WriteTimeline), and the index.html
// that links a suite's runs (WriteIndex).

package reliability

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// maxDetails bounds the violations drawn in their own window on
// timeline.html.
const maxDetails = 20

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
	for i := range pages {
		if err := os.WriteFile(filepath.Join(dir, pages[i].file), []byte(tl.windowPage(pages, i)), 0o644); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, TimelineFile)
	return path, os.WriteFile(path, []byte(tl.mainPage(pages)), 0o644)
}

// windowPage is the HTML of window page i: every hold of its window, and
// links to the pages before and after it and to the overview.
func (tl *timeline) windowPage(pages []page, i int) string {
	name, title, p := tl.name, tl.title, pages[i]
	var b strings.Builder
	c := &canvas{tl: tl, from: p.from, to: p.to, b: &b}
	pageHead(&b, fmt.Sprintf("%s %s – %s", name, c.sec(p.from), c.sec(p.to)))
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
	return b.String()
}

// mainPage is the HTML of timeline.html: the run's numbers and verdict,
// the overview, the violations and the links to the window pages.
func (tl *timeline) mainPage(pages []page) string {
	name, title, h, vs := tl.name, tl.title, tl.h, tl.vs
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
	return b.String()
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
			rel := r.Timeline // a checkpoint's, relative to dir already
			if filepath.IsAbs(rel) {
				if p, err := filepath.Rel(dir, rel); err == nil {
					rel = p
				}
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
		to := windowEnd(v.From, v.To)
		fmt.Fprintf(b, "[%s] ", esc(id))
		for _, p := range pages {
			if p.to >= v.From && p.from <= to {
				fmt.Fprintf(b, `<a href="%s">%s</a> `, p.file, p.file)
			}
		}
		if first && details < maxDetails {
			details++
			drawViolation(b, tl, v, to, id)
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
}

// drawViolation draws v's own window, [v.From, to] and a fifth of it (at
// least 100 ms) either side, with v and the holds its explanation names in
// red; id is its anchor.
func drawViolation(b *strings.Builder, tl *timeline, v *Violation, to int64, id string) {
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
