// Command jobrunner is a leader-only job runner: start several, on one
// election path, and only the leader runs the periodic job. The job writes
// its results to a database, PostgreSQL or SQLite, through package fence:
// each write's transaction checks the leader's fencing token, and the
// database refuses a token lower than one it has already accepted.
//
//	jobrunner -servers 127.0.0.1:2181 -id runner-1 -db /var/lib/jobs/results.db
//	jobrunner -servers 127.0.0.1:2181 -id runner-2 -db postgres://jobs@db.internal/jobs
//
// -db is a postgres:// URL (driver github.com/jackc/pgx/v5/stdlib) or a
// SQLite file (modernc.org/sqlite); the runner creates the tables it needs
// (zklock_fence and jobrunner_results). With -report it prints the fence's
// token and the stored results instead, and exits.
//
// Each runner campaigns with zklock.LeaderElection and WithRequeue: when its
// term ends (the leader's process died and its session expired, or it
// resigned, or it lost its session), another runner takes over with a
// larger token, and the old one campaigns again if it is still alive.
//
// The job loop checks for loss only at the top of each cycle: it then
// "computes" for -interval and writes without checking again. That window
// stands for any pause between a check and a write (a GC pause, a page
// fault, a SIGSTOP): a leader paused in it past its session wakes up, still
// believing it leads, and writes. No lock service can prevent that; the
// database can, because the new leader's token is larger. The demo
// (`make demo`, scripts/demo.sh) shows exactly that. A refused runner ends
// its term: the refusal proves that another leader has taken over.
//
// Output, one line per event, prefixed with the runner's id:
//
//	[runner-1] campaigning on /demo/jobrunner
//	[runner-1] LEADER token=4294967302 node=/demo/jobrunner/_c_...-lock-0000000000
//	[runner-1] write token=4294967302 value="runner-1#1" committed
//	[runner-1] write token=4294967302 value="runner-1#9" REFUSED by the database: fence: resource "/demo/jobrunner": stale token 4294967302: token 4294967310 already accepted
//	[runner-1] term ended: refused by the database
//
// It stops on SIGINT or SIGTERM, resigning first if it leads.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
)

type config struct {
	servers        string
	path           string
	id             string
	db             string
	resource       string
	sessionTimeout time.Duration
	interval       time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.servers, "servers", "127.0.0.1:2181", "ZooKeeper servers, host:port,...")
	flag.StringVar(&c.path, "path", "/demo/jobrunner", "election path")
	flag.StringVar(&c.id, "id", "", "this runner's id (required)")
	flag.StringVar(&c.db, "db", "", "results database: a postgres:// URL or a SQLite file (required)")
	flag.StringVar(&c.resource, "resource", "", "the fenced resource's name (default: the election path)")
	flag.DurationVar(&c.sessionTimeout, "session-timeout", 2*time.Second, "ZooKeeper session timeout")
	flag.DurationVar(&c.interval, "interval", 200*time.Millisecond, "how long each job cycle computes before it writes")
	report := flag.Bool("report", false, "print the fence's token and the stored results, then exit")
	drop := flag.Bool("drop", false, "with -report: then delete the resource's results and fence row")
	flag.Parse()
	if c.resource == "" {
		c.resource = c.path
	}
	if *report {
		if c.db == "" {
			fmt.Fprintln(os.Stderr, "jobrunner: -report needs -db")
			os.Exit(2)
		}
		if err := printReport(c, *drop, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "jobrunner: report: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if c.id == "" || c.db == "" || c.interval <= 0 || strings.ContainsAny(c.id, " \n") {
		fmt.Fprintln(os.Stderr, "jobrunner: -id (no spaces) and -db are required, -interval must be positive")
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "[%s] %v\n", c.id, err)
		os.Exit(1)
	}
}

// printer writes whole lines, one at a time, so that the runners' output
// stays readable when several share a terminal or a log file.
type printer struct {
	mu  sync.Mutex
	out io.Writer
	id  string
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "["+p.id+"] "+format+"\n", args...)
}

func printReport(c config, drop bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := openStore(ctx, c.db, c.resource)
	if err != nil {
		return err
	}
	defer st.Close()
	return st.report(ctx, out, drop)
}

func run(ctx context.Context, c config, out io.Writer) error {
	p := &printer{out: out, id: c.id}
	st, err := openStore(ctx, c.db, c.resource)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := zklock.Connect(strings.Split(c.servers, ","),
		zklock.WithSessionTimeout(c.sessionTimeout),
		zklock.WithLossLimit(0), // a term ends the moment the connection drops, as Curator's LeaderSelector
		zklock.WithObserver(func(ev zklock.Event) {
			if ev.Kind == zklock.EventState && ev.State != zklock.StateConnected && ev.State != zklock.StateClosed {
				p.printf("session %s", ev.State)
			}
		}))
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := zklock.NewLeaderElection(s, c.path, c.id, zklock.WithRequeue())
	if err != nil {
		return err
	}
	j := &job{p: p, c: c, root: ctx, store: st}
	p.printf("campaigning on %s", c.path)
	return e.Run(ctx, j.lead)
}

// job is the leader-only work.
type job struct {
	p     *printer
	c     config
	root  context.Context // the runner's own context: stopping ends the campaign
	store *store
	n     int
}

// lead runs while this runner leads: compute, write with the term's token,
// repeat. It checks for the end of the term only at the top of each cycle
// (see the package comment: that gap is what fencing is for).
func (j *job) lead(ctx context.Context, l *zklock.Leadership) error {
	j.p.printf("LEADER token=%d node=%s", l.Token(), l.Hold().Node())
	for ctx.Err() == nil {
		j.n++
		value := fmt.Sprintf("%s#%d", j.c.id, j.n)
		time.Sleep(j.c.interval) // "computing"; a pause here outlives the term unnoticed
		if j.root.Err() != nil {
			break // the runner is stopping (not the term ending: that goes unnoticed here)
		}
		if j.write(l.Token(), value) {
			j.p.printf("term ended: refused by the database")
			j.campaignAgain()
			return nil
		}
	}
	j.p.printf("term ended: %v", context.Cause(ctx))
	j.campaignAgain()
	return nil
}

func (j *job) campaignAgain() {
	if j.root.Err() == nil {
		j.p.printf("campaigning on %s", j.c.path)
	}
}

// write stores value under token and reports the verdict; it returns
// whether the database refused the token as stale. It writes under the
// runner's context, not the term's: like any write begun before a pause,
// it does not know the term has ended.
func (j *job) write(token int64, value string) (stale bool) {
	ctx, cancel := context.WithTimeout(j.root, 10*time.Second)
	defer cancel()
	err := j.store.write(ctx, j.c.id, token, value)
	switch {
	case err == nil:
		j.p.printf("write token=%d value=%q committed", token, value)
	case errors.Is(err, fence.ErrStale):
		j.p.printf("write token=%d value=%q REFUSED by the database: %v", token, value, err)
		return true
	default:
		j.p.printf("write token=%d value=%q failed: %v", token, value, err)
	}
	return false
}
