package reliability

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock"
	"go.uber.org/goleak"
)

// WorkerConfig configures one worker process (see cmd/worker).
type WorkerConfig struct {
	Name           string        // label in events and in the lock nodes' data
	Servers        []string      // ZooKeeper (or proxy) addresses
	Clients        int           // sessions, each used by Share goroutines
	Share          int           // goroutines per session (0 or 1: one), so that holds hand over within a session
	Root           string        // lock paths are Root/lock-<i>
	Locks          int           // number of locks contended for
	ZKRegister     string        // ZooKeeper register nodes are ZKRegister/lock-<i> ("" = none)
	Register       string        // address of the fenced register ("" = none)
	PG             string        // DSN of the PostgreSQL register's database ("" = none; see PGWrite)
	Recipe         string        // "mutex", "semmutex", "rw", "multi" (S12), "leader" (S13) or "schedule" (S27)
	Writers        float64       // rw: the share of write acquisitions
	SessionTimeout time.Duration // asked of the server
	HoldMin        time.Duration
	HoldMax        time.Duration
	LockTimeout    time.Duration // bound on one Lock call
	LongEvery      int           // one acquisition in LongEvery (0: none) is long
	LongHold       time.Duration // a long hold: until this passes or the hold is lost
	Negative       string        // "", "N1" (no fencing), "N3" (ignore disconnection) or "N7" (no fence.Check); needs -tags zklock_negative
	// Restat reads the holder's node again just before each release, so
	// that C3 checks the hold still has its node and token after faults.
	Restat bool
	// Auth is the sessions' credentials, "scheme:cred" ("": none), and ACL
	// the ACL of the nodes they create, as zklock.ParseACL reads it ("":
	// the default, open to all).
	Auth, ACL string
}

// LockPath returns the path of lock i.
func LockPath(root string, i int) string { return fmt.Sprintf("%s/lock-%d", root, i) }

// RegisterPath returns the path of lock i's ZooKeeper register (a child of
// the -zkreg parent, root + "-reg").
func RegisterPath(root string, i int) string { return LockPath(root+"-reg", i) }

// RunWorker runs the clients until ctx ends, then releases, closes every
// session and returns. Every step is logged to log.
func RunWorker(ctx context.Context, cfg WorkerConfig, log *Log) error {
	if cfg.Negative != "" && !NegativeBuild {
		return fmt.Errorf("worker: negative control %s needs -tags zklock_negative", cfg.Negative)
	}
	switch cfg.Recipe {
	case "mutex", "semmutex", "rw", "multi", "leader", "schedule":
	default:
		return fmt.Errorf("worker: unknown recipe %q (mutex, semmutex, rw, multi, leader, schedule)", cfg.Recipe)
	}
	before := goleak.IgnoreCurrent()
	var db *sql.DB // one pool for the process's clients
	if cfg.PG != "" {
		var err error
		if db, err = sql.Open("pgx", cfg.PG); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
		n := cfg.Clients * max(cfg.Share, 1)
		db.SetMaxOpenConns(n)
		db.SetMaxIdleConns(n)
	}
	var wg sync.WaitGroup
	errc := make(chan error, cfg.Clients)
	for c := 1; c <= cfg.Clients; c++ {
		wg.Go(func() {
			if err := runClient(ctx, cfg, c, log, db); err != nil {
				errc <- err
			}
		})
	}
	wg.Wait()
	if db != nil {
		db.Close() // before the leak check: its connections' goroutines end with it
	}
	// Every session is closed: nothing of ours may still run (C5).
	leak := goleak.Find(before)
	log.Add(Event{Kind: KindContract, Worker: cfg.Name, Name: ContractNoLeak, OK: leak == nil, Err: errString(leak)})
	log.Add(Event{Kind: KindExit, Worker: cfg.Name})
	close(errc)
	return <-errc
}

func runClient(ctx context.Context, cfg WorkerConfig, session int, log *Log, db *sql.DB) error {
	share := max(cfg.Share, 1)
	// Each goroutine of the session is a client of its own in the history,
	// and each sees the session's state changes.
	clients := make([]int, share)
	for k := range clients {
		clients[k] = (session-1)*share + k + 1
	}
	opts := []zklock.SessionOption{zklock.WithSessionTimeout(cfg.SessionTimeout), zklock.WithObserver(func(ev zklock.Event) {
		if ev.Kind == zklock.EventState {
			for _, client := range clients {
				log.Add(Event{Kind: KindState, Worker: cfg.Name, Client: client, Session: ev.Session, Name: ev.State.String()})
			}
		}
	})}
	if cfg.Negative == "N3" {
		// N3: no loss signal until the session expires (Curator's "session"
		// connection-state policy, unsafe without fencing).
		opts = append(opts, zklock.WithLossLimit(-1))
	}
	if cfg.Recipe == "leader" || cfg.Recipe == "schedule" {
		// The leader docs: a term ends at the first disconnection, so a
		// forced expiry cannot leave two leaders believing they lead.
		opts = append(opts, zklock.WithLossLimit(0))
	}
	lockOpts := []zklock.Option{zklock.WithData([]byte(cfg.Name))}
	if cfg.Auth != "" {
		scheme, cred, _ := strings.Cut(cfg.Auth, ":")
		opts = append(opts, zklock.WithAuth(scheme, []byte(cred)))
	}
	if cfg.ACL != "" {
		acl, err := zklock.ParseACL(cfg.ACL)
		if err != nil {
			return err
		}
		lockOpts = append(lockOpts, zklock.WithACL(acl))
	}
	sess, err := zklock.Connect(cfg.Servers, opts...)
	if err != nil {
		return err
	}
	defer sess.Close()
	if cfg.Recipe == "schedule" { // schedule.go
		return runScheduleClient(ctx, cfg, session, log, sess)
	}
	// One register connection per client: a RegisterClient serves one
	// goroutine.
	regs := make([]*RegisterClient, len(clients))
	if cfg.Register != "" {
		for k := range regs {
			if regs[k], err = DialRegister(cfg.Register); err != nil {
				return err
			}
			defer regs[k].Close()
		}
	}
	excl := make([]locker, cfg.Locks)   // mutex, semaphore mutex or write half
	shared := make([]locker, cfg.Locks) // read half (rw)
	for i := range excl {
		p := LockPath(cfg.Root, i)
		switch cfg.Recipe {
		case "mutex", "multi":
			excl[i], err = zklock.NewMutex(sess, p, lockOpts...)
		case "semmutex":
			excl[i], err = zklock.NewSemaphoreMutex(sess, p, lockOpts...)
		case "rw":
			var rw *zklock.RWLock
			if rw, err = zklock.NewRWLock(sess, p, lockOpts...); err == nil {
				excl[i], shared[i] = rw.WriteLock(), rw.ReadLock()
			}
		case "leader":
			var le *zklock.LeaderElection
			if le, err = zklock.NewLeaderElection(sess, p, cfg.Name, lockOpts[1:]...); err == nil {
				excl[i] = campaigner{le}
			}
		}
		if err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	for k, client := range clients {
		wg.Go(func() { runOps(ctx, cfg, log, sess, sinks{regs[k], db}, client, excl, shared) })
	}
	wg.Wait()
	return nil
}

// sinks are the fenced resources a client writes to: the register process
// and the PostgreSQL register (either may be nil).
type sinks struct {
	reg *RegisterClient
	pg  *sql.DB
}

// runOps is one client's loop of acquisitions on its session.
func runOps(ctx context.Context, cfg WorkerConfig, log *Log, sess *zklock.Session, out sinks, client int, excl, shared []locker) {
	for op := int64(1); ctx.Err() == nil; op++ {
		if cfg.Recipe == "multi" {
			runMulti(ctx, cfg, log, sess, out, client, op, excl)
			continue
		}
		i := rand.IntN(cfg.Locks)
		base := Event{Worker: cfg.Name, Client: client, Op: op, Lock: LockPath(cfg.Root, i)}
		l := excl[i]
		if shared[i] != nil && rand.Float64() >= cfg.Writers {
			l, base.Read = shared[i], true
		}
		w := &clientOp{cfg: cfg, log: log, sess: sess, out: out, base: base, res: "lock-" + strconv.Itoa(i)}
		w.run(ctx, l)
	}
}

// locker is what every recipe's exclusive or shared half offers.
type locker interface {
	Lock(ctx context.Context) (*zklock.Hold, error)
}

type clientOp struct {
	cfg  WorkerConfig
	log  *Log
	sess *zklock.Session
	out  sinks
	base Event
	res  string
	n    int // writes to the register so far
	z    int // writes to the ZooKeeper register so far
}

func (w *clientOp) add(kind string, f func(*Event)) {
	e := w.base
	e.Kind = kind
	if f != nil {
		f(&e)
	}
	w.log.Add(e)
}

func (w *clientOp) run(ctx context.Context, m locker) {
	w.add(KindInvoke, nil)
	lctx, cancel := context.WithTimeout(ctx, w.cfg.LockTimeout)
	h, err := m.Lock(lctx)
	cancel()
	if err != nil {
		w.add(KindFail, func(e *Event) {
			e.Err = err.Error()
			if ctx.Err() != nil {
				e.Err = "stopped: " + e.Err
			}
		})
		return
	}
	w.add(KindOK, func(e *Event) { e.Session, e.Node, e.Token = h.SessionID(), h.Node(), h.Token() })
	lossDone := make(chan struct{})
	go func() {
		defer close(lossDone)
		<-h.Done()
		if err := h.Err(); errors.Is(err, zklock.ErrLost) {
			w.add(KindLoss, func(e *Event) { e.Err = err.Error(); e.Token = h.Token() })
		}
	}()
	w.stat(h)
	if !w.base.Read { // readers do not write
		w.write(h.Token())
		w.zkWrite(h)
	}
	hold := w.cfg.HoldMin
	if d := w.cfg.HoldMax - w.cfg.HoldMin; d > 0 {
		hold += rand.N(d)
	}
	if w.cfg.LongEvery > 0 && rand.IntN(w.cfg.LongEvery) == 0 {
		hold = w.cfg.LongHold
	}
	select { // a correct client stops working for the lock once it is lost
	case <-time.After(hold):
	case <-h.Done():
	case <-ctx.Done(): // the run is over
	}
	if !w.base.Read { // a holder paused mid-hold writes again on waking
		w.write(h.Token())
		w.zkWrite(h)
	}
	if w.cfg.Restat {
		w.stat(h)
	}
	w.add(KindRelease, nil)
	err = h.Release()
	<-lossDone
	_ = err // a lost hold returns its loss error; the loss event says so
}

// stat reads the holder's node independently of the library (C3: its czxid
// is the token, its owner the hold's session).
func (w *clientOp) stat(h *zklock.Hold) {
	if ok, st, err := w.sess.Conn().Exists(h.Node()); err == nil {
		w.add(KindStat, func(e *Event) {
			e.Node, e.Token, e.OK = h.Node(), h.Token(), ok
			if ok {
				e.Czxid, e.Owner = st.Czxid, st.EphemeralOwner
			}
		})
	}
}

// write sends one write to the fenced register (or to the PostgreSQL
// register: pgWrite).
func (w *clientOp) write(token int64) {
	if w.out.pg != nil {
		w.pgWrite(token)
	}
	if w.out.reg == nil {
		return
	}
	w.n++
	elem := w.base.HoldID() + "#" + strconv.Itoa(w.n)
	w.log.Flush() // the hold is on disk before its effect, even if we are SIGKILLed next
	ok, err := w.out.reg.Write(w.res, token, elem, w.cfg.Negative != "N1")
	w.add(KindWrite, func(e *Event) {
		e.Token, e.OK, e.Elem = token, ok, elem
		if err != nil {
			e.Err = err.Error()
		}
	})
}

// zkWrite writes the token to the ZooKeeper register under the hold's guard
// (a multi with a check on the holder's node). N1 drops the guard. The event
// carries the call and return times, and the register's new version, for the
// linearizability check; a failure other than a refused check (the holder's
// node gone) leaves the outcome unknown.
func (w *clientOp) zkWrite(h *zklock.Hold) {
	if w.cfg.ZKRegister == "" {
		return
	}
	p := w.cfg.ZKRegister + "/" + w.res
	data := []byte(strconv.FormatInt(h.Token(), 10))
	var st *zk.Stat
	w.z++
	elem := "z" + strconv.Itoa(w.z)
	t0 := Mono()
	w.add(KindZKInvoke, func(e *Event) { e.T, e.Token, e.Elem = t0, h.Token(), elem })
	w.log.Flush() // an effect of a SIGKILLed worker is never without its invoke
	var err error
	if w.cfg.Negative == "N1" {
		st, err = w.sess.Conn().Set(p, data, -1)
	} else {
		var rs []zk.MultiResponse
		if rs, err = w.sess.Conn().Multi(h.Guard(), &zk.SetDataRequest{Path: p, Data: data, Version: -1}); err == nil {
			if len(rs) == 2 && rs[1].Stat != nil {
				st = rs[1].Stat
			} else {
				err = fmt.Errorf("multi answered %d results", len(rs))
			}
		}
	}
	w.add(KindZKWrite, func(e *Event) {
		e.Token, e.OK, e.T0, e.Elem = h.Token(), err == nil, t0, elem
		if st != nil {
			e.Zxid, e.Ver = st.Mzxid, st.Version
		}
		if err != nil {
			e.Err = err.Error()
			e.Amb = !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion)
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
