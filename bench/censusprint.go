package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// censusRows are the census records with a timeline's detail, standalone
// first, in target order.
func (r *Report) censusRows() []Record {
	var out []Record
	for _, setup := range []string{Standalone, Ensemble} {
		for _, t := range r.targets() {
			for _, m := range []string{measureUnc, measureCont, measureHeldCont} {
				for _, rec := range r.Records {
					if rec.Target == t && rec.Setup == setup && rec.Measure == censusPrefix+m && rec.Census != nil {
						out = append(out, rec)
					}
				}
			}
		}
	}
	return out
}

// memberText is "member reads/writes ..." per operation, in member order.
func memberText(c *CensusDetail) string {
	keys := slices.Sorted(maps.Keys(c.ByMember))
	var b strings.Builder
	for _, k := range keys {
		v := c.ByMember[k]
		fmt.Fprintf(&b, "%s %.2f/%.2f ", k, v[0], v[1])
	}
	return strings.TrimSpace(b.String())
}

// opsText is "op=x.xx ..." sorted by op, or "-".
func opsText(m map[string]float64) string {
	if len(m) == 0 {
		return "-"
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "%s=%.2f ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}

// printCensus writes the census's detail: requests per operation by kind
// and member, and what a session waited on.
func (r *Report) printCensus(w io.Writer) {
	rows := r.censusRows()
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nrequest census per operation (cycle uncontended, handoff contended, %d sessions), from the relays' timeline: reads, writes, other; reads/writes by the member the session was connected to\n", r.Config.Contenders)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tsetup\tmeasure\treq/op\treads\twrites\tother\tnotif\tby member (reads/writes)\t")
	for _, rec := range rows {
		c := rec.Census
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t\n", rec.Target, rec.Setup, strings.TrimPrefix(rec.Measure, censusPrefix),
			rec.RequestsPerHandoff, c.Reads, c.Writes, c.Other, rec.NotificationsPerHandoff, memberText(c))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\nwhat a session waits on: uncontended, from its create to its releasing delete; contended, from the notification that woke it to that delete (it holds just before); contended-held, to the moment it holds (a marker the harness sends), each holder holding %v. Waited: the reply came back before the delete left; off path: it came later. Per window; times are medians in ms\n", censusHold)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tsetup\tmeasure\twindows\twaited\tstages\toff path\twaited on\toff the path\twhile held\tdelete→wake\twake→hold\trelease rtt\t")
	for _, rec := range rows {
		p := rec.Census.Path
		if p == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%.3f\t\n", rec.Target, rec.Setup, strings.TrimPrefix(rec.Measure, censusPrefix),
			p.Windows, p.Waited, p.Stages, p.OffPath, opsText(p.WaitedOps), opsText(p.OffPathOps), opsText(p.DuringHold),
			num(p.DeleteToWakeMs, p.DeleteToWakeMs > 0, "%.3f"), num(p.WakeToHoldMs, p.WakeToHoldMs > 0, "%.3f"), p.ReleaseMs)
	}
	_ = tw.Flush()
}
