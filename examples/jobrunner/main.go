// Command jobrunner is a leader-only job runner: start several, on one
// election path, and only the leader runs the periodic job. The job writes
// to a fenced store (examples/fencedstore) with the leader's fencing token,
// and the store refuses a token lower than one it has already seen.
//
//	jobrunner -servers 127.0.0.1:2181 -id runner-1 -store http://127.0.0.1:8080
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
// fenced store can, because the new leader's token is larger. The demo
// (`make demo`, scripts/demo.sh) shows exactly that.
//
// Output, one line per event, prefixed with the runner's id:
//
//	[runner-1] campaigning on /demo/jobrunner
//	[runner-1] LEADER token=4294967302 node=/demo/jobrunner/_c_...-lock-0000000000
//	[runner-1] write token=4294967302 value="runner-1#1" accepted
//	[runner-1] write token=4294967302 value="runner-1#9" REJECTED: stale token
//	[runner-1] term ended: zklock: lock lost: zklock: session expired
//
// It stops on SIGINT or SIGTERM, resigning first if it leads.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

type config struct {
	servers        string
	path           string
	id             string
	store          string
	sessionTimeout time.Duration
	interval       time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.servers, "servers", "127.0.0.1:2181", "ZooKeeper servers, host:port,...")
	flag.StringVar(&c.path, "path", "/demo/jobrunner", "election path")
	flag.StringVar(&c.id, "id", "", "this runner's id (required)")
	flag.StringVar(&c.store, "store", "", "fenced store URL, e.g. http://127.0.0.1:8080 (required)")
	flag.DurationVar(&c.sessionTimeout, "session-timeout", 2*time.Second, "ZooKeeper session timeout")
	flag.DurationVar(&c.interval, "interval", 200*time.Millisecond, "how long each job cycle computes before it writes")
	flag.Parse()
	if c.id == "" || c.store == "" || c.interval <= 0 || strings.ContainsAny(c.id, " \n") {
		fmt.Fprintln(os.Stderr, "jobrunner: -id (no spaces) and -store are required, -interval must be positive")
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

func run(ctx context.Context, c config, out io.Writer) error {
	p := &printer{out: out, id: c.id}
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
	j := &job{p: p, c: c, root: ctx, client: &http.Client{Timeout: 2 * time.Second}}
	p.printf("campaigning on %s", c.path)
	return e.Run(ctx, j.lead)
}

// job is the leader-only work.
type job struct {
	p      *printer
	c      config
	root   context.Context // the runner's own context: stopping ends the campaign
	client *http.Client
	n      int
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
		j.write(l.Token(), value)
	}
	j.p.printf("term ended: %v", context.Cause(ctx))
	if j.root.Err() == nil {
		j.p.printf("campaigning on %s", j.c.path)
	}
	return nil
}

// write sends value to the fenced store under token and reports the verdict.
func (j *job) write(token int64, value string) {
	q := url.Values{"writer": {j.c.id}, "token": {fmt.Sprint(token)}, "value": {value}}
	resp, err := j.client.Post(strings.TrimSuffix(j.c.store, "/")+"/write?"+q.Encode(), "text/plain", nil)
	if err != nil {
		j.p.printf("write token=%d value=%q failed: %v", token, value, err)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		j.p.printf("write token=%d value=%q accepted", token, value)
	case http.StatusConflict:
		j.p.printf("write token=%d value=%q REJECTED: stale token (%s)", token, value, strings.TrimSpace(string(body)))
	default:
		j.p.printf("write token=%d value=%q: store answered %s", token, value, resp.Status)
	}
}
