package lockview

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// Config is what a View watches and how much of it.
type Config struct {
	// Root is the caller's path of the tree to walk (default "/locks").
	Root string
	// MaxDirs bounds the directories watched below the root (default
	// DefaultMaxDirs): each costs a listing at every change, a watch on the
	// server and a goroutine. Past it the first directories by name are
	// watched and the overview counts the rest (NotShown).
	MaxDirs int
	// MaxDetail bounds the nodes of one directory whose stat is read
	// (default 200, in queue order); the rest are counted, not read.
	MaxDetail int
	// RequestTimeout bounds each ZooKeeper request (default 10s).
	RequestTimeout time.Duration
	// Members are the ensemble's client addresses (host:port), asked for
	// their four-letter words srvr (health) and cons (each session's
	// client address) each PollEvery (default 10s), over TLS with TLS.
	// None: neither is shown.
	Members   []string
	TLS       *tls.Config
	PollEvery time.Duration
	// History is the window a lock's history covers (default 30m).
	History time.Duration
	Logger  *slog.Logger
}

// DefaultMaxDirs is Config.MaxDirs's default: a first walk of about a
// second on one ZooKeeper server (docs/cli.md has the measures).
const DefaultMaxDirs = 2000

// A View keeps every lock directory under a root current: one goroutine
// and one children watch per directory, started by New and stopped by
// Close. Readers (Overview, Lock, Changed) share them. It is safe for
// concurrent use.
type View struct {
	s    *zklock.Session
	cfg  Config
	root string // znode path of the root
	ns   string // znode path of the namespace ("" for none)
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	dirs      map[string]*dir // by znode path
	locks     map[string]*lockState
	changed   chan struct{} // closed and replaced at every change
	connected bool
	connCh    chan struct{} // closed and replaced when connected changes
	sid       int64
	rootGone  bool
	pending   int // directories not yet listed once
	ready     chan struct{}
	isReady   bool
	reads     chan struct{} // a slot per lock node read in flight, view-wide
	lists     chan struct{} // a slot per listing in flight, view-wide
	ens       *ensemble
	events    []evRef              // every lock's timeline events, in the order recorded (history.go)
	total     int                  // the events in the locks' timelines
	revokes   map[string]time.Time // node znode paths this server asked to release
	vanished  map[int64][]gone     // recent holder and waiter departures, by session
}

// dir is one watched znode.
type dir struct {
	path      string
	listed    bool // listed once at least
	counted   bool // counted as listed for Ready
	children  []string
	stat      zk.Stat
	data      []byte               // the node's data, when short (a stored lease count)
	nodes     map[string]*nodeStat // the stats of the lock nodes read so far
	subs      map[string]bool      // children with a tracker of their own
	unwatched int                  // children left without one: MaxDirs were watched
	problem   string
}

// nodeStat is what a lock node's read gave: its id (the data's first
// MaxIDBytes), not its data.
type nodeStat struct {
	id     string
	owner  string // zklock.OwnerOf the data
	size   int32
	cut    bool
	ctime  time.Time
	czxid  int64
	sid    int64
	denied string // why the node cannot be read (its ACL); the rest is then zero
}

// New starts watching cfg.Root on s. The first listing of every directory
// is under way when it returns; Ready tells when it is done. s must stay
// open until Close.
func New(s *zklock.Session, cfg Config) (*View, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil session", zklock.ErrInvalidArgument)
	}
	if cfg.Root == "" {
		cfg.Root = "/locks"
	}
	if cfg.Root != "/" {
		if err := zklock.ValidatePath(cfg.Root); err != nil {
			return nil, fmt.Errorf("root: %w", err)
		}
	}
	if cfg.MaxDirs <= 0 {
		cfg.MaxDirs = DefaultMaxDirs
	}
	if cfg.MaxDetail <= 0 {
		cfg.MaxDetail = 200
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.History <= 0 {
		cfg.History = 30 * time.Minute
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	v := &View{
		s: s, cfg: cfg, root: s.FullPath(cfg.Root), log: cfg.Logger,
		dirs: map[string]*dir{}, locks: map[string]*lockState{},
		changed: make(chan struct{}), connCh: make(chan struct{}), ready: make(chan struct{}),
		revokes: map[string]time.Time{}, vanished: map[int64][]gone{}, reads: make(chan struct{}, maxReads),
		lists: make(chan struct{}, maxListings),
	}
	if ns := s.Namespace(); ns != "" {
		v.ns = "/" + ns
	}
	v.ctx, v.cancel = context.WithCancel(context.Background())
	v.connected, v.sid = s.State() == zklock.StateConnected, s.ID()
	v.wg.Go(v.followSession)
	v.ens = newEnsemble(cfg)
	if len(cfg.Members) > 0 {
		v.wg.Go(v.pollEnsemble)
	}
	v.mu.Lock()
	v.spawnLocked(v.root)
	v.mu.Unlock()
	return v, nil
}

// Close stops every watch goroutine and waits for them. Requests still in
// flight end with the session.
func (v *View) Close() {
	v.cancel()
	v.wg.Wait()
}

// Ready is closed once every directory found has been listed once (or the
// root was found missing).
func (v *View) Ready() <-chan struct{} { return v.ready }

// Polled is closed once the ensemble's members were asked once (at once
// without Members).
func (v *View) Polled() <-chan struct{} { return v.ens.polled }

// Changed returns a channel closed at the next change of anything shown.
func (v *View) Changed() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// Status says whether the view is current.
func (v *View) Status() Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.statusLocked()
}

func (v *View) statusLocked() Status {
	st := Status{Connected: v.connected, At: time.Now()}
	st.Members, st.ClientsNote = v.ens.state()
	var problems []string
	if !v.connected {
		problems = append(problems, "the connection to ZooKeeper is lost; reconnecting (what is shown may be out of date)")
	}
	for _, m := range st.Members {
		if !m.Up {
			problems = append(problems, "ensemble member "+m.Addr+" does not answer ("+m.Problem+")")
		}
	}
	if v.rootGone {
		problems = append(problems, fmt.Sprintf("%s does not exist (yet); it is watched and shown once created", v.cfg.Root))
	}
	var failing []string
	for _, d := range v.dirs {
		if d.problem != "" {
			failing = append(failing, d.problem)
		}
		st.NotShown += d.unwatched
	}
	if st.NotShown > 0 {
		problems = append(problems, fmt.Sprintf("%s more directories under %s not shown: at most %s are watched (zklock --max-dirs)",
			Thousands(st.NotShown), v.cfg.Root, Thousands(v.cfg.MaxDirs)))
	}
	slices.Sort(failing)
	switch {
	case len(failing) == 1:
		problems = append(problems, failing[0])
	case len(failing) > 1:
		problems = append(problems, fmt.Sprintf("%d directories cannot be listed (%s, ...)", len(failing), failing[0]))
	}
	st.Problem = strings.Join(problems, "; ")
	st.Deadlocks = v.deadlocksLocked()
	return st
}

// Overview returns every lock under the root, sorted by path; a filter
// keeps the locks whose path contains it.
func (v *View) Overview(filter string) Overview {
	v.mu.Lock()
	defer v.mu.Unlock()
	st := v.statusLocked()
	o := Overview{Root: v.cfg.Root, Namespace: v.s.Namespace(), Connected: st.Connected, Problem: st.Problem, At: st.At, Locks: []Lock{},
		NotShown: st.NotShown, Ensemble: st.Members, ClientsNote: st.ClientsNote, Deadlocks: st.Deadlocks}
	for _, ls := range v.locks {
		if ls.gone.IsZero() && strings.Contains(ls.lock.Path, filter) {
			l := ls.lock
			l.Queue, l.Timeline = nil, nil
			l.Holders = v.withClients(l.Holders)
			l.RecentHolds = ls.recentHolds(st.At)
			o.Locks = append(o.Locks, l)
		}
	}
	slices.SortFunc(o.Locks, func(a, b Lock) int { return cmp.Compare(a.Path, b.Path) })
	return o
}

// Lock returns the lock at the caller's path p with its queue and
// timeline, or false if no lock directory is known there.
func (v *View) Lock(p string) (Lock, Status, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ls, ok := v.locks[p]
	if !ok {
		return Lock{}, v.statusLocked(), false
	}
	l := ls.lock
	l.Holders, l.Queue = v.withClients(l.Holders), v.withClients(l.Queue)
	h := ls.historyLocked(time.Now(), v.cfg.History)
	l.History = &h
	l.Timeline = make([]Event, 0, len(ls.timeline))
	for i := len(ls.timeline) - 1; i >= 0; i-- {
		l.Timeline = append(l.Timeline, *ls.timeline[i])
	}
	return l, v.statusLocked(), true
}

// withClients returns a copy of nodes with each one's client, if known.
func (v *View) withClients(nodes []Node) []Node {
	if len(v.cfg.Members) == 0 {
		return nodes
	}
	out := slices.Clone(nodes)
	for i := range out {
		if out[i].sid != 0 {
			out[i].Client = v.ens.client(out[i].sid)
		}
	}
	return out
}

// callerPath is a znode path without the namespace.
func (v *View) callerPath(p string) string {
	if v.ns == "" {
		return p
	}
	if p == v.ns {
		return "/"
	}
	return strings.TrimPrefix(p, v.ns)
}

// notifyLocked wakes every reader waiting on Changed.
func (v *View) notifyLocked() {
	close(v.changed)
	v.changed = make(chan struct{})
}

// followSession tracks the session's state, locally (no request is sent):
// readers are told when the connection is lost and found again, and the
// directory goroutines wait while it is down.
func (v *View) followSession() {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-v.ctx.Done():
			return
		case <-tick.C:
		}
		up := v.s.State() == zklock.StateConnected
		v.mu.Lock()
		if up != v.connected {
			v.connected = up
			close(v.connCh)
			v.connCh = make(chan struct{})
			v.notifyLocked()
		}
		v.mu.Unlock()
	}
}

// waitConnected waits until the session is connected; false if the view
// is closed first.
func (v *View) waitConnected() bool {
	for {
		v.mu.Lock()
		up, ch := v.connected, v.connCh
		v.mu.Unlock()
		if up {
			return true
		}
		select {
		case <-ch:
		case <-v.ctx.Done():
			return false
		}
	}
}

// request runs one ZooKeeper request, bounded by RequestTimeout and the
// view's life: go-zookeeper's requests take no context, and one queued on
// a dead connection would otherwise wait for the reconnect. f must write
// only variables its caller reads after a nil error.
func (v *View) request(f func() error) error {
	ctx, cancel := context.WithTimeout(v.ctx, v.cfg.RequestTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer from ZooKeeper within %v: %w", v.cfg.RequestTimeout, ctx.Err())
	}
}

// isNoNode reports a node that does not exist.
func isNoNode(err error) bool { return errors.Is(err, zk.ErrNoNode) }
