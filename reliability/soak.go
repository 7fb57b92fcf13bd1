package reliability

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The soak (make soak): every scenario, round-robin, until a time budget is
// spent; each finished run appended to a JSONL checkpoint, from which the
// summary is computed (so a killed soak keeps what it had, and a soak can be
// resumed or summarised later).

// SoakRecord is one line of the soak's checkpoint file: one finished run of
// one scenario.
type SoakRecord struct {
	Seq      int       `json:"seq"`   // 1, 2, ... over the whole soak (resumptions included)
	Round    int       `json:"round"` // the round-robin pass it belongs to (1-based)
	Duration float64   `json:"duration_s"`
	Ended    time.Time `json:"ended"`
	// Code is the commit whose library code the run ran (CodeEnv); a
	// commit followed by "+modified" when the library's files differed
	// from it; empty in checkpoints that predate it.
	Code string `json:"code,omitempty"`
	Result
}

// CodeEnv names the environment variable by which scripts/reliability.sh
// tells the soak the code it runs (SoakRecord.Code).
const CodeEnv = "RELIABILITY_CODE"

// Soak schedules a soak: scenarios round-robin, durations scaled so that
// one round fits the budget where it can (never below each scenario's
// floor), until the budget is spent. It does not run anything itself, so
// that its arithmetic is tested without ZooKeeper.
type Soak struct {
	Budget time.Duration
	Scale  float64 // the soak durations' scale, in (0, 1]
	scs    []*Scenario
	next   int
	seq    int
	round  int
	spent  time.Duration
	est    map[string]time.Duration // measured cost of a run, by scenario
	runs   map[string]int
}

// Overhead is the estimated cost of a run beyond its duration: starting the
// servers and the workers, stopping them, waiting for a clean state and
// checking the history.
func Overhead(sc *Scenario) time.Duration {
	if sc.Servers >= 3 {
		return 25 * time.Second
	}
	return 10 * time.Second
}

// NewSoak plans a soak of scs (at their soak durations) for budget: each
// scenario's duration becomes max(floor, soak duration x Scale), Scale the
// largest in (0, 1] at which one round, overheads included, fits the budget
// (the floors: the durations of make reliability, which are known to expose
// faults). A scenario with no floor keeps its duration.
func NewSoak(scs []*Scenario, floors map[string]time.Duration, budget time.Duration) *Soak {
	cost := func(s float64) time.Duration {
		var sum time.Duration
		for _, sc := range scs {
			sum += scaled(sc, floors, s) + Overhead(sc)
		}
		return sum
	}
	scale := 1.0
	if cost(1) > budget {
		lo, hi := 0.0, 1.0
		for range 50 {
			mid := (lo + hi) / 2
			if cost(mid) <= budget {
				lo = mid
			} else {
				hi = mid
			}
		}
		scale = max(lo, 1e-3)
	}
	k := &Soak{Budget: budget, Scale: scale, est: map[string]time.Duration{}, runs: map[string]int{}, round: 1}
	for _, sc := range scs {
		c := *sc
		c.Duration = scaled(sc, floors, scale)
		k.scs = append(k.scs, &c)
	}
	return k
}

func scaled(sc *Scenario, floors map[string]time.Duration, s float64) time.Duration {
	d := time.Duration(float64(sc.Duration) * s).Round(time.Second)
	if f, ok := floors[sc.Name]; ok && f > 0 {
		d = max(d, f)
	}
	return min(d, sc.Duration)
}

// Scenarios returns the scenarios as the soak runs them (scaled).
func (k *Soak) Scenarios() []*Scenario { return k.scs }

// Spent returns the time the finished runs took.
func (k *Soak) Spent() time.Duration { return k.spent }

// Estimate returns what a run of sc is expected to cost: what its last run
// took, or its duration plus Overhead.
func (k *Soak) Estimate(sc *Scenario) time.Duration {
	if d, ok := k.est[sc.Name]; ok {
		return d
	}
	return sc.Duration + Overhead(sc)
}

// Next returns the next run: a copy of the next scenario in round-robin
// order whose estimate fits the budget left (Run numbers its runs), and the
// round it belongs to; false once none fits.
func (k *Soak) Next() (*Scenario, int, bool) {
	left := k.Budget - k.spent
	n := len(k.scs)
	for i := range n {
		idx := k.next + i // k.next is in [0, n]: n means the round is over
		sc := k.scs[idx%n]
		if k.Estimate(sc) > left {
			continue
		}
		if idx >= n {
			k.round++
		}
		k.next = idx%n + 1
		c := *sc
		c.Run = k.runs[sc.Name] + 1
		k.runs[sc.Name] = c.Run
		return &c, k.round, true
	}
	return nil, k.round, false
}

// Done records a finished run (its Result.Seconds is what it cost) and
// returns its checkpoint record.
func (k *Soak) Done(sc *Scenario, round int, r Result) SoakRecord {
	k.seq++
	d := time.Duration(r.Seconds * float64(time.Second))
	k.spent += d
	k.est[sc.Name] = d
	return SoakRecord{Seq: k.seq, Round: round, Duration: sc.Duration.Seconds(), Ended: time.Now().UTC(), Code: os.Getenv(CodeEnv), Result: r}
}

// Resume accounts for the records of an earlier, interrupted soak: their
// time counts against the budget, their runs keep their numbers, and the
// round-robin goes on after the last scenario they ran.
func (k *Soak) Resume(recs []SoakRecord) {
	for _, r := range recs {
		k.seq = max(k.seq, r.Seq)
		k.round = max(k.round, r.Round)
		k.spent += time.Duration(r.Seconds * float64(time.Second))
		k.runs[r.Name]++
		k.est[r.Name] = time.Duration(r.Seconds * float64(time.Second))
	}
	// Go on after the last scheduled scenario that finished: the runs
	// appended by the container suite (AppendRun) are not in the schedule.
	for j := len(recs) - 1; j >= 0; j-- {
		for i, sc := range k.scs {
			if sc.Name == recs[j].Name {
				k.next = i + 1
				return
			}
		}
	}
}

// AppendRun appends a run made outside the soak's schedule (the container
// scenarios, which live in another module) to the checkpoint file at path,
// numbered after the records already there and in their last round.
func AppendRun(path string, sc *Scenario, r Result) error {
	recs, err := ReadRecords(path)
	if err != nil {
		return err
	}
	rec := SoakRecord{Seq: 1, Round: 1, Duration: sc.Duration.Seconds(), Ended: time.Now().UTC(), Code: os.Getenv(CodeEnv), Result: r}
	for _, x := range recs {
		rec.Seq = max(rec.Seq, x.Seq+1)
		rec.Round = max(rec.Round, x.Round)
	}
	return AppendRecord(path, rec)
}

// AppendRecord appends r to the checkpoint file at path as one JSON line,
// synced to disk before it returns. It writes the run's timeline paths
// (Timeline, See) relative to the file's folder, so that a checkpoint names
// no folder of the machine it ran on and its links hold where it is copied
// with its histories.
func AppendRecord(path string, r SoakRecord) error {
	r.Timeline = relativeTo(path, r.Timeline)
	see := make([]string, 0, len(r.See))
	for _, p := range r.See {
		see = append(see, relativeTo(path, p))
	}
	r.See = see
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return appendLine(path, b)
}

// relativeTo returns the absolute path p relative to the folder of the file
// at path, in slashes; p itself when it is empty, relative already, or not
// expressible so.
func relativeTo(path, p string) string {
	if p == "" || !filepath.IsAbs(p) {
		return p
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}

// appendLine appends one line to the file at path and syncs it.
func appendLine(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadRecords reads a checkpoint file's runs; a torn last line (a killed
// soak) is skipped, as are lines that are not runs (re-judgements). A
// missing file is no records.
func ReadRecords(path string) ([]SoakRecord, error) {
	var out []SoakRecord
	err := eachLine(path, func(b []byte) {
		var rec SoakRecord
		if json.Unmarshal(b, &rec) == nil && rec.Name != "" {
			out = append(out, rec)
		}
	})
	return out, err
}

// eachLine calls f with each line of the file at path; a missing file has
// none.
func eachLine(path string, f func([]byte)) error {
	file, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		f(sc.Bytes())
	}
	return sc.Err()
}

// SoakTotals is the soak's summary.
type SoakTotals struct {
	Runs, Acquisitions, FaultExposed, Faults, Violations int
	StoreLosses                                          int // acknowledged writes ZooKeeper forgot (not violations)
	Seconds                                              float64
}

// Upper95 is the one-sided 95% upper confidence bound on the per-acquisition
// violation rate after v violations in n trials (Clopper-Pearson; for v = 0
// it is 1 - 0.05^(1/n), about 3/n, the rule of three). It is 1 for n = 0.
func Upper95(n, v int) float64 {
	if n <= 0 || v >= n {
		return 1
	}
	if v == 0 {
		return 1 - math.Pow(0.05, 1/float64(n))
	}
	// The p at which P(X <= v | n, p) = 0.05, by bisection (the CDF falls
	// as p grows).
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if binomCDF(v, n, mid) > 0.05 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func binomCDF(v, n int, p float64) float64 {
	lg := func(x float64) float64 { l, _ := math.Lgamma(x); return l }
	sum := 0.0
	for k := 0; k <= v; k++ {
		lc := lg(float64(n+1)) - lg(float64(k+1)) - lg(float64(n-k+1))
		sum += math.Exp(lc + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return sum
}

// Totals sums the records of the scenarios (negative controls excluded):
// fault-exposed acquisitions are those of runs in which faults were
// injected.
func Totals(recs []SoakRecord) SoakTotals {
	var t SoakTotals
	for _, r := range recs {
		if r.Negative != "" {
			continue
		}
		t.Runs++
		t.Acquisitions += r.Acquisitions
		t.Faults += r.Faults
		t.Violations += r.Total
		t.StoreLosses += r.StoreLosses
		t.Seconds += r.Seconds
		if r.Faults > 0 {
			t.FaultExposed += r.Acquisitions
		}
	}
	return t
}

// SummaryLine is the soak's one summary line: the code and ZooKeeper
// releases the runs ran (each when known), and the totals.
func SummaryLine(recs []SoakRecord) string {
	t := Totals(recs)
	code := ""
	if c := Codes(recs); len(c) > 0 {
		code = "code=" + strings.Join(c, ",") + " "
	}
	return fmt.Sprintf("soak: %s%sacquisitions=%d fault_exposed=%d faults=%d violations=%d upper95=%.3g",
		code, ReleaseField(results(recs)), t.Acquisitions, t.FaultExposed, t.Faults, t.Violations, Upper95(t.FaultExposed, t.Violations))
}

// Codes returns the codes the runs ran (SoakRecord.Code), in the order
// first seen, "unknown" standing for runs without one; nil when no run has
// one (a checkpoint that predates them). One code means that every run ran
// the same library code.
func Codes(recs []SoakRecord) []string {
	var out []string
	seen, has := map[string]bool{}, false
	for _, r := range recs {
		c := r.Code
		has = has || c != ""
		if c == "" {
			c = "unknown"
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	if !has {
		return nil
	}
	return out
}

// StoreLines says, one line a run, in which runs ZooKeeper forgot
// acknowledged writes (StoreChecker findings, not counted as violations).
func StoreLines(recs []SoakRecord) []string {
	var out []string
	for _, r := range recs {
		if r.StoreLosses > 0 && r.Negative == "" {
			plural := "s"
			if r.StoreLosses == 1 {
				plural = ""
			}
			out = append(out, fmt.Sprintf("store: run %d (%s): ZooKeeper forgot %d acknowledged write%s (not counted as violations; see its %s findings)",
				r.Seq, r.Name, r.StoreLosses, plural, StoreChecker))
		}
	}
	return out
}

// SoakTable renders one row per scenario: its runs, time, acquisitions,
// fault-exposed acquisitions, faults, losses, violations per checker, the
// worst p99 acquire latency and recovery.
func SoakTable(recs []SoakRecord) string {
	type row struct {
		name, title                            string
		runs, acq, exposed, faults, losses, vt int
		errs                                   int
		secs, p99, maxrec                      float64
		v                                      map[string]int
	}
	rows := map[string]*row{}
	var names []string
	for _, r := range recs {
		key := r.Name
		if r.Negative != "" {
			key = r.Negative + "_" + r.Name
		}
		w := rows[key]
		if w == nil {
			w = &row{name: key, title: r.Title, v: map[string]int{}}
			rows[key] = w
			names = append(names, key)
		}
		w.runs++
		w.acq += r.Acquisitions
		if r.Faults > 0 {
			w.exposed += r.Acquisitions
		}
		w.faults += r.Faults
		w.losses += r.Losses
		w.vt += r.Total
		if len(r.Errors) > 0 {
			w.errs++
		}
		w.secs += r.Seconds
		w.p99 = max(w.p99, r.P99AcquireMs)
		w.maxrec = max(w.maxrec, r.MaxRecovery)
		for c, n := range r.Violations {
			w.v[c] += n
		}
	}
	neg := func(n string) bool { return strings.Contains(n, "_") } // N5_S17: controls after the scenarios
	sort.SliceStable(names, func(i, j int) bool {
		if neg(names[i]) != neg(names[j]) {
			return !neg(names[i])
		}
		return naturalLess(names[i], names[j])
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%-6s %-40s %4s %7s %9s %9s %6s %6s %5s %4s  %-31s %8s %8s\n", "scen", "title", "runs", "secs", "acqs", "exposed", "faults", "losses", "viol", "errs",
		"C1 C2 C3 C4 C5 C6 C7 C8", "p99ms", "maxrecms")
	for _, n := range names {
		w := rows[n]
		var vs []string
		for _, c := range Checkers {
			vs = append(vs, fmt.Sprintf("%-3d", w.v[c]))
		}
		title := w.title
		if len(title) > 40 {
			title = title[:40]
		}
		fmt.Fprintf(&b, "%-6s %-40s %4d %7.0f %9d %9d %6d %6d %5d %4d  %-31s %8.1f %8.1f\n", w.name, title, w.runs, w.secs, w.acq, w.exposed, w.faults, w.losses, w.vt, w.errs,
			strings.Join(vs, " "), w.p99, w.maxrec)
	}
	t := Totals(recs)
	fmt.Fprintf(&b, "%-6s %-40s %4d %7.0f %9d %9d %6d %6s %5d\n", "total", "", t.Runs, t.Seconds, t.Acquisitions, t.FaultExposed, t.Faults, "", t.Violations)
	return b.String()
}

// ParseBudget reads SOAK_BUDGET: a Go duration ("4h", "90s", "1h30m").
func ParseBudget(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("SOAK_BUDGET=%q: want a positive duration such as 4h or 90s", s)
	}
	return d, nil
}
