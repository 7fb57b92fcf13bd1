package bench

import (
	"fmt"
	"io"
	"maps"
	"strings"

	"github.com/zklock/zklock/internal/peers"
)

// VersionServer is one standalone server of the release comparison: a
// ZooKeeper release started like the others (fsync on), on which only
// zklock's mutex runs.
type VersionServer struct {
	Release string // "3.9": the ratio keys' name, stable across patch releases
	Version string // "3.9.6": what the server reports (srvr)
	Addr    string // host:port
}

// VersionReport is the release comparison: zklock's mutex timed on each
// of Servers in turn, in every repetition, with the same workloads.
type VersionReport struct {
	Servers []VersionServer `json:"servers"` // the ratios' numerator first
	// Records are zklock's runs; a record's Setup is its server's Release.
	Records []Record `json:"records"`
}

// announce says, as the suite's first line, which releases run: the
// servers' and the peers' (internal/peers' Newest generation).
func (s *suite) announce() error {
	r := &Report{ZooKeeper: s.srv.Version, Versions: &VersionReport{Servers: s.srv.Versions}}
	g := peers.Newest()
	if !s.cfg.SkipCurator {
		r.Curator = g.CuratorVersion
	}
	if !s.cfg.SkipKazoo {
		r.Kazoo = g.KazooVersion
	}
	s.say("%s", r.releaseLine())
	return nil
}

// releaseLine names the releases a report measured, for its first line.
func (r *Report) releaseLine() string {
	var b strings.Builder
	zk := r.ZooKeeper
	if zk == "" {
		zk = "of unknown release"
	}
	fmt.Fprintf(&b, "ZooKeeper %s", zk)
	if r.Curator != "" {
		fmt.Fprintf(&b, ", Curator %s", r.Curator)
	}
	if r.Kazoo != "" {
		fmt.Fprintf(&b, ", kazoo %s", r.Kazoo)
	}
	if v := r.Versions; v != nil && len(v.Servers) > 1 {
		fmt.Fprintf(&b, "; release comparison: zklock on ZooKeeper %s", versionList(v.Servers))
	}
	return b.String()
}

// versionMeasures are the workloads the comparison runs.
var versionMeasures = []string{measureUnc, measureCont}

// versionKey is the RATIO key of the first server over the second in
// measure: "<workload> zk3.9/zk3.8".
func versionKey(measure string, a, b VersionServer) string {
	return workloadName(direct, measure) + " zk" + a.Release + "/zk" + b.Release
}

// intervals are the comparison's ratios: per workload, the first server's
// throughput over each other's, paired by repetition (see ratioIntervals).
func (v *VersionReport) intervals() map[string]Interval {
	out := map[string]Interval{}
	if v == nil || len(v.Servers) < 2 {
		return out
	}
	a := v.Servers[0]
	for _, m := range versionMeasures {
		for _, b := range v.Servers[1:] {
			xs := pairedRatios(perRep(v.Records, cellOf{a.Release, 0}, ZklockMutex, m, perSec),
				perRep(v.Records, cellOf{b.Release, 0}, ZklockMutex, m, perSec))
			if len(xs) > 0 {
				out[versionKey(m, a, b)] = repeatInterval(xs)
			}
		}
	}
	return out
}

// releases checks the release comparison's servers: at least two, each of
// another release; it warms each up and records them. A suite whose
// servers all report one release (ZKTEST_CLASSPATH set, an external
// server) skips the comparison and says so.
func (s *suite) releases() error {
	vs := s.srv.Versions
	seen := map[string]bool{}
	for _, v := range vs {
		seen[v.Version] = true
	}
	if len(vs) < 2 || len(seen) < len(vs) {
		if len(vs) > 0 {
			s.say("release comparison skipped: its servers report %s", versionList(vs))
		}
		return nil
	}
	s.rep.Versions = &VersionReport{Servers: vs}
	t := s.zklock()
	for _, v := range vs {
		if _, err := t.Uncontended(v.Addr, "/bench/versions/warm", 0, s.cfg.Warm); err != nil {
			return fmt.Errorf("zklock on ZooKeeper %s warm-up: %w", v.Version, err)
		}
		if _, err := t.Contended([]string{v.Addr}, "/bench/versions/warmc", s.cfg.Contenders, s.cfg.Contenders, s.cfg.Warm); err != nil {
			return fmt.Errorf("zklock on ZooKeeper %s warm-up: %w", v.Version, err)
		}
	}
	s.say("release comparison: zklock's mutex on ZooKeeper %s, interleaved", versionList(vs))
	return nil
}

// zklock is zklock's mutex among the suite's Go targets.
func (s *suite) zklock() *goTarget {
	for _, g := range s.goTargets {
		if g.Name() == ZklockMutex {
			return g
		}
	}
	panic("bench: no " + ZklockMutex + " target") // goLibs always has it
}

// versionRuns is repetition i of the release comparison: each workload
// on every server in turn, starting at another server each repetition.
func (s *suite) versionRuns(i int) error {
	v := s.rep.Versions
	if v == nil {
		return nil
	}
	t := s.zklock()
	n := len(v.Servers)
	for _, m := range versionMeasures {
		for j := range n {
			vs := v.Servers[(i+j)%n]
			meter := &cpuMeter{server: serverPID(vs.Addr)}
			meter.start()
			path := fmt.Sprintf("/bench/versions/%s%d", m, i)
			var r Run
			var err error
			if m == measureUnc {
				r, err = t.Uncontended(vs.Addr, path, s.cfg.Warm, s.cfg.PhaseUncontended)
			} else {
				r, err = t.Contended([]string{vs.Addr}, path, s.cfg.Contenders, s.cfg.Contenders, s.cfg.PhaseContended)
			}
			meter.stop(&r)
			if err != nil {
				return fmt.Errorf("zklock %s on ZooKeeper %s: %w", m, vs.Version, err)
			}
			s.say("rep %d %-14s %-22s %-11s %8.0f /s p50 %v p99 %v", i, "zk"+vs.Version, t.Name(), m, r.PerSec, r.P50, r.P99)
			v.Records = append(v.Records, Record{Target: t.Name(), Measure: m, Setup: vs.Release, Rep: i, Run: &r})
		}
	}
	return nil
}

// addVersionRatios puts the comparison's ratios beside the others.
func (r *Report) addVersionRatios() {
	ivs := r.Versions.intervals()
	if r.Intervals == nil {
		r.Intervals = map[string]Interval{}
	}
	maps.Copy(r.Intervals, ivs)
	r.Ratios = ratios(r.Intervals)
}

func versionList(vs []VersionServer) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Version
	}
	return strings.Join(names, " and ")
}

// printVersions writes the comparison's table: per server and workload,
// the median throughput, p50, p99 and the server's CPU per operation.
func (r *Report) printVersions(w io.Writer) {
	v := r.Versions
	if v == nil {
		return
	}
	fmt.Fprintf(w, "\nZooKeeper releases, zklock's mutex on a standalone server of each (fsync on), interleaved: medians of %d repetitions (uncontended: cycles/s; contended, %d sessions: handoffs/s; zk cpu: the server's CPU ms per operation)\n",
		r.Config.Reps, r.Config.Contenders)
	tw := table(w)
	fmt.Fprintln(tw, "server\tuncont/s\tp50\tp99\tzk cpu\tcont/s\twait p50\twait p99\tzk cpu\t")
	for _, s := range v.Servers {
		c := cellOf{s.Release, 0}
		row := "ZooKeeper " + s.Version + "\t"
		for _, m := range versionMeasures {
			x, ok := medianOf(v.Records, c, ZklockMutex, m, perSec)
			a, _ := medianOf(v.Records, c, ZklockMutex, m, func(x *Run) float64 { return float64(x.P50) })
			b, _ := medianOf(v.Records, c, ZklockMutex, m, func(x *Run) float64 { return float64(x.P99) })
			cpu, _ := medianOf(v.Records, c, ZklockMutex, m, func(x *Run) float64 { return x.ServerCPU })
			if !ok {
				row += "-\t-\t-\t-\t"
				continue
			}
			row += fmt.Sprintf("%.0f\t%s\t%s\t%s\t", x, ms(a), ms(b), num(cpu, cpu > 0, "%.2f"))
		}
		fmt.Fprintln(tw, row)
	}
	_ = tw.Flush()
}

// printVersionRatios writes the comparison's RATIO lines.
func (r *Report) printVersionRatios(w io.Writer) {
	v := r.Versions
	if v == nil || len(v.Servers) < 2 {
		return
	}
	ivs := r.ratioStats()
	for _, m := range versionMeasures {
		for _, b := range v.Servers[1:] {
			k := versionKey(m, v.Servers[0], b)
			if iv, ok := ivs[k]; ok {
				fmt.Fprintf(w, "RATIO %s %s\n", k, iv)
			}
		}
	}
}

// versionsHTML writes the release comparison's section: the ratios with
// their intervals, then each server's medians.
func (r *Report) versionsHTML(b *strings.Builder) {
	v := r.Versions
	if v == nil || len(v.Servers) < 2 {
		return
	}
	fmt.Fprintf(b, "<h2 id=\"versions\">ZooKeeper releases: zklock's mutex on ZooKeeper %s</h2>\n", esc(versionList(v.Servers)))
	b.WriteString("<p>A standalone server of each release, started alike (fsync on); each repetition runs every workload on each in turn. Ratios as above, paired by repetition.</p>\n<table>\n<tr><th class=\"name\">workload</th><th class=\"name\">ratio</th><th>median [interval]</th>")
	for _, s := range v.Servers {
		fmt.Fprintf(b, "<th>ZooKeeper %s /s</th><th>p99 ms</th>", esc(s.Version))
	}
	b.WriteString("</tr>\n")
	ivs := r.ratioStats()
	for _, m := range versionMeasures {
		for _, o := range v.Servers[1:] {
			k := versionKey(m, v.Servers[0], o)
			w, pair, _ := strings.Cut(k, " ")
			iv, ok := ivs[k]
			cell := num(iv.X, ok, "%.2f")
			if ok {
				cell += fmt.Sprintf(" <small>[%s, %s]</small>", bound(iv.Lo), bound(iv.Hi))
			}
			fmt.Fprintf(b, "<tr><td class=\"name\">%s</td><td class=\"name\">%s</td><td>%s</td>", esc(w), esc(pair), cell)
			for _, s := range v.Servers {
				c := cellOf{s.Release, 0}
				x, okX := medianOf(v.Records, c, ZklockMutex, m, perSec)
				p99, _ := medianOf(v.Records, c, ZklockMutex, m, func(x *Run) float64 { return float64(x.P99) })
				fmt.Fprintf(b, "<td>%s</td><td>%s</td>", num(x, okX, "%.0f"), ms(p99))
			}
			b.WriteString("</tr>\n")
		}
	}
	b.WriteString("</table>\n")
}
