package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Scenario is one row of the plan's §6.3 table, at some duration.
type Scenario struct {
	Name    string
	Title   string
	Servers int           // 1 standalone, 3 ensemble
	Workers int           // worker processes (multi-process scenarios)
	Clients int           // sessions per worker
	Share   int           // goroutines per session (0: one)
	Locks   int           // locks contended for
	Recipe  string        // worker recipe: mutex (default), semmutex, rw
	Session time.Duration // session timeout
	HoldMin time.Duration
	HoldMax time.Duration
	// LongEvery: one acquisition in LongEvery (0: none) holds for LongHold,
	// or until the hold's loss signal, as a client doing long work under
	// the lock would.
	LongEvery int
	LongHold  time.Duration
	Duration  time.Duration
	Proxies   bool   // each worker connects through its own zktest proxy
	Negative  string // N1..N7: run the broken variant (negative build only)
	// Postgres: holders write to a PostgreSQL table through fence.Check
	// (pgregister.go) instead of to the register process; each run gets a
	// fresh database on the test binary's one server (pgtest.Shared).
	Postgres bool
	// Nemesis injects faults until ctx ends, healing each before returning.
	Nemesis func(ctx context.Context, e *Env)
	// InProcess replaces the worker processes: the scenario drives sessions
	// itself and logs to e.Nem (same clock, same checkers).
	InProcess func(ctx context.Context, e *Env)
	// Survive: the faults are shorter than the loss limit, so no hold may be
	// lost and no session may expire; holders must see the suspension and
	// keep their node and token (workers re-read it before release).
	Survive bool
	// Config overrides the default checker bounds.
	Check *CheckConfig
	// Run numbers repeated runs of the scenario (the soak): its history is
	// kept under RELIABILITY_KEEP/<name>/run-<Run> (0: <name>).
	Run int
	// Cluster, when set, starts the scenario's cluster of servers members
	// instead of zktest.Start or StartEnsemble (for example in containers,
	// see zktest/containers).
	Cluster func(t testing.TB, servers int) *zktest.Cluster
	// QuorumRelay starts the ensemble with zktest.WithQuorumRelay, so that
	// the nemesis can make a follower lag (zktest's Cluster.SetLag).
	QuorumRelay bool
	// Auth, "scheme:cred", are the workers' credentials, which the suite's
	// observer connection (Env.Conn) also uses; ACL is the ACL of the
	// workers' nodes (see WorkerConfig).
	Auth, ACL string
}

// Result is one scenario's row of the report.
type Result struct {
	Name     string `json:"name"`
	Title    string `json:"title"`
	Negative string `json:"negative,omitempty"`
	// ZooKeeper is the release the run's servers reported ("3.9.6";
	// "unknown" when they did not answer; empty in older records).
	ZooKeeper    string         `json:"zookeeper,omitempty"`
	Seconds      float64        `json:"seconds"`
	Acquisitions int            `json:"acquisitions"`
	Faults       int            `json:"faults"`
	Losses       int            `json:"losses"` // loss signals delivered to holders
	Violations   map[string]int `json:"violations"`
	Total        int            `json:"violations_total"`
	// StoreLosses counts the acknowledged writes ZooKeeper forgot
	// (StoreChecker findings): not zklock violations, so not in Total.
	StoreLosses int `json:"store_losses,omitempty"`
	// Database counts the PostgreSQL register's transactions by the outcome
	// their workers saw, and its rows (DatabaseOutcomes).
	Database     map[string]int `json:"database,omitempty"`
	P99AcquireMs float64        `json:"p99_acquire_ms"`
	MaxRecovery  float64        `json:"max_recovery_ms"`
	P99Recovery  float64        `json:"p99_recovery_ms"`
	Examples     []Violation    `json:"examples,omitempty"`
	Errors       []string       `json:"errors,omitempty"`
	// Timeline is the path of the run's HTML timeline (timeline.go); See
	// holds, for each example, where to look at it in that timeline.
	Timeline string   `json:"timeline,omitempty"`
	See      []string `json:"see,omitempty"`
	// Ticks accounts for a schedule's ticks (the schedule recipe, S27).
	Ticks *Ticks `json:"ticks,omitempty"`
}

// CheckConfigFor returns the checker bounds for a scenario.
func CheckConfigFor(sc *Scenario) CheckConfig {
	if sc.Check != nil {
		return *sc.Check
	}
	return CheckConfig{
		Survive:    sc.Survive,
		LossLimit:  sc.Session * 2 / 3,
		Session:    sc.Session,
		Resume:     time.Second,
		PauseGrace: sc.Session + 3*time.Second,
		Recovery:   2*sc.Session + 5*time.Second, // T + 2 elections + 2 s, generous for 2 cores
		Idle:       2 * time.Second,
	}
}

// Run runs a scenario against a fresh cluster and checks its history.
func Run(t testing.TB, sc *Scenario) Result {
	t.Helper()
	began := time.Now()
	res := Result{Name: sc.Name, Title: sc.Title, Negative: sc.Negative, Violations: map[string]int{}}
	bins, err := Build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	opts := []zktest.Option{}
	if sc.QuorumRelay {
		opts = append(opts, zktest.WithQuorumRelay())
	}
	var c *zktest.Cluster
	switch {
	case sc.Cluster != nil:
		c = sc.Cluster(t, sc.Servers)
	case sc.Servers >= 3:
		c = zktest.StartEnsemble(t, opts...)
	default:
		c = zktest.Start(t, opts...)
	}
	if sc.Nemesis != nil {
		c.RequireFaults(t)
	}
	res.ZooKeeper = serverRelease(c)
	dir := t.TempDir()
	nem, err := CreateLog(filepath.Join(dir, "nemesis.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Sc: sc, Dir: dir, C: c, Conn: c.Connect(t, 10*time.Second), Root: "/reliability/" + sc.Name, Nem: nem}
	if sc.Auth != "" {
		scheme, cred, _ := strings.Cut(sc.Auth, ":")
		if err := e.Conn.AddAuth(scheme, []byte(cred)); err != nil {
			t.Fatalf("observer credentials: %v", err)
		}
	}
	mustCreate(t, e.Conn, "/reliability")
	mustCreate(t, e.Conn, e.Root)
	if sc.ACL != "" {
		// The lock directories' parent too: anyone who may delete in it may
		// delete an empty lock directory and make it again with an ACL of
		// their own.
		acl, err := zklock.ParseACL(sc.ACL)
		if err == nil {
			_, err = e.Conn.SetACL(e.Root, acl, -1)
		}
		if err != nil {
			t.Fatalf("ACL of %s: %v", e.Root, err)
		}
	}
	mustCreate(t, e.Conn, e.Root+"-reg")
	for i := range sc.Locks {
		mustCreate(t, e.Conn, RegisterPath(e.Root, i))
	}
	var db *sql.DB
	if sc.Postgres {
		db = e.startDatabase(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sc.Duration)
	defer cancel()
	logs := []string{nem.f.Name()}
	if sc.InProcess != nil {
		setNegative(sc.Negative)
		sc.InProcess(ctx, e)
		setNegative("")
	} else {
		logs = append(logs, e.startProcs(t, bins)...)
		nemDone := make(chan struct{})
		go func() {
			defer close(nemDone)
			if sc.Nemesis != nil {
				sc.Nemesis(ctx, e)
			}
		}()
		<-ctx.Done()
		<-nemDone
		logs = append(logs, e.extraLogs...)
		for _, w := range e.Workers {
			if err := w.Stop(30 * time.Second); err != nil {
				res.Errors = append(res.Errors, err.Error())
			}
		}
		if e.Reg != nil {
			if err := e.Reg.Stop(10 * time.Second); err != nil {
				res.Errors = append(res.Errors, err.Error())
			}
		}
	}
	if db != nil {
		if p := e.readDatabase(db, &res); p != "" {
			logs = append(logs, p)
		}
	}
	res.Errors = append(res.Errors, e.errors()...)
	if err := nem.Close(); err != nil {
		t.Fatal(err)
	}
	final := e.finalState()
	evs, err := ReadFiles(logs...)
	if err != nil {
		t.Fatalf("read histories: %v", err)
	}
	h := Analyze(evs)
	vs := CheckAll(h, final, CheckConfigFor(sc))
	res.Violations, res.Total, res.StoreLosses, res.Examples = Tally(vs)
	res.Acquisitions = h.Acquisitions()
	if sc.Recipe == "schedule" {
		if res.Ticks = TickReport(h, final); res.Ticks != nil {
			res.Acquisitions = res.Ticks.Ran
		}
	}
	res.Database = DatabaseOutcomes(h)
	res.Faults = e.Faults()
	for _, ev := range h.Events {
		if ev.Kind == KindLoss {
			res.Losses++
		}
	}
	res.P99AcquireMs = float64(Percentile(h.Latencies(), 99)) / 1e6
	rec := h.Recoveries()
	if len(rec) > 0 {
		res.P99Recovery = float64(Percentile(rec, 99)) / 1e6
		res.MaxRecovery = float64(rec[len(rec)-1]) / 1e6
	}
	res.Seconds = time.Since(began).Seconds()
	keepHistory(t, sc, dir, logs, h, vs, &res)
	return res
}

func mustCreate(t testing.TB, conn *zk.Conn, p string) {
	t.Helper()
	if _, err := conn.Create(p, []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
		t.Fatalf("create %s: %v", p, err)
	}
}

// startProcs starts the register (unless the scenario writes to
// PostgreSQL) and the workers and returns their logs.
func (e *Env) startProcs(t testing.TB, bins Binaries) []string {
	sc := e.Sc
	e.bins = bins
	var logs []string
	if !sc.Postgres {
		logs = append(logs, e.startRegister(t))
	}
	for i := 1; i <= sc.Workers; i++ {
		var p *zktest.Proxy
		if sc.Proxies {
			p = e.C.Proxy(t)
		}
		w, err := e.startWorker("w"+strconv.Itoa(i), p)
		if err != nil {
			t.Fatal(err)
		}
		e.Workers = append(e.Workers, w)
		logs = append(logs, w.Log)
	}
	for _, w := range e.Workers {
		if err := w.started(); err != nil {
			t.Fatal(err)
		}
	}
	return logs
}

// startRegister starts the register process and returns its log.
func (e *Env) startRegister(t testing.TB) string {
	regLog := filepath.Join(e.Dir, "register.jsonl")
	reg, err := startProc("register", e.bins.Register, regLog, nil, "-log", regLog)
	if err != nil {
		t.Fatalf("start register: %v", err)
	}
	e.Reg = reg
	t.Cleanup(func() { reg.Stop(5 * time.Second) })
	line := <-reg.first
	addr, ok := strings.CutPrefix(line, "listening ")
	if !ok {
		t.Fatalf("register said %q", line)
	}
	e.regAddr = addr
	return regLog
}

// startWorker starts worker process name, through proxy p if not nil; it
// is stopped at the end of the test at the latest.
func (e *Env) startWorker(name string, p *zktest.Proxy) (*Proc, error) {
	sc := e.Sc
	servers := e.C.Servers()
	if p != nil {
		servers = p.Addrs()
	}
	wlog := filepath.Join(e.Dir, name+".jsonl")
	args := []string{"-name", name, "-servers", strings.Join(servers, ","), "-clients", strconv.Itoa(sc.Clients),
		"-root", e.Root, "-locks", strconv.Itoa(sc.Locks), "-zkreg", e.Root + "-reg", "-register", e.regAddr, "-pg", e.pgDSN,
		"-session", sc.Session.String(), "-hold-min", sc.HoldMin.String(), "-hold-max", sc.HoldMax.String(), "-log", wlog,
		"-long-every", strconv.Itoa(sc.LongEvery), "-long-hold", sc.LongHold.String()}
	if sc.Recipe != "" {
		args = append(args, "-recipe", sc.Recipe)
	}
	if sc.Share > 1 {
		args = append(args, "-share", strconv.Itoa(sc.Share))
	}
	if sc.Auth != "" {
		args = append(args, "-auth", sc.Auth, "-acl", sc.ACL)
	}
	if sc.Survive {
		args = append(args, "-restat")
	}
	env := []string{"GOMAXPROCS=1"}
	switch sc.Negative {
	case "N1", "N3", "N7":
		args = append(args, "-negative", sc.Negative)
	case "N2", "N4", "N5", "N6", "N9":
		env = append(env, "ZKLOCK_NEGATIVE="+sc.Negative)
	}
	w, err := startProc(name, e.bins.Worker, wlog, env, args...)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	w.Proxy = p
	e.T.Cleanup(func() { w.Stop(5 * time.Second) })
	return w, nil
}

// FormatTable renders results as a fixed-width table.
func FormatTable(rs []Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-4s %-44s %6s %6s %6s %5s  %-31s %9s %9s %5s\n", "scen", "title", "acqs", "faults", "losses", "viol", "C1 C2 C3 C4 C5 C6 C7 C8", "p99acqms", "maxrecms", "secs")
	for _, r := range rs {
		var vs []string
		for _, c := range Checkers {
			vs = append(vs, fmt.Sprintf("%-3d", r.Violations[c]))
		}
		title := r.Title
		if r.Negative != "" {
			title = r.Negative + " under " + title
		}
		if len(title) > 44 {
			title = title[:44]
		}
		fmt.Fprintf(&b, "%-4s %-44s %6d %6d %6d %5d  %-31s %9.1f %9.1f %5.0f\n", r.Name, title, r.Acquisitions, r.Faults, r.Losses, r.Total,
			strings.Join(vs, " "), r.P99AcquireMs, r.MaxRecovery, r.Seconds)
	}
	return b.String()
}
