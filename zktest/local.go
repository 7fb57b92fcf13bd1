package zktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// localBackend runs each member as a java process on 127.0.0.1.
type localBackend struct {
	cfg       *config
	tls       *TLS // nil: plaintext
	js        javaSetup
	dir       string // cluster directory, the -Dzktest.dir marker
	members   []*member
	relays    *quorumRelays // WithQuorumRelay; nil otherwise
	restarted []int         // members resync restarted at boot, to sync by DIFF
}

type member struct {
	mu     sync.Mutex
	idx    int
	dir    string
	cfg    string // zoo.cfg path
	addr   string // client address
	args   []string
	proc   *process // nil when not running
	paused bool
}

var errPortClash = errors.New("zktest: a server could not bind its port")

func startLocal(t testing.TB, cfg config) *Cluster {
	t.Helper()
	js, err := findJava(cfg.version, cfg.serverHome)
	if err != nil {
		t.Fatal(err)
	}
	if killed := book.Reap(); len(killed) > 0 {
		t.Logf("zktest: killed orphaned ZooKeeper servers %v left by exited test binaries", killed)
	}
	// TempDir before Cleanup: cleanups run last-in first-out, so the
	// servers are dead before the directory is removed.
	lb := &localBackend{cfg: &cfg, js: js, dir: t.TempDir()}
	if err := writeLogback(lb.dir, cfg.logOutput != nil); err != nil {
		t.Fatalf("zktest: logging configuration: %v", err)
	}
	if cfg.tls {
		if lb.tls, err = writeTLS(lb.dir, cfg.clientAuth, cfg.tlsNames); err != nil {
			t.Fatalf("zktest: TLS material: %v", err)
		}
	}
	t.Cleanup(func() { lb.shutdown(t) })
	for attempt := 1; ; attempt++ {
		servers, err := lb.boot()
		if err == nil {
			c := &Cluster{cfg: cfg, servers: servers, book: newSessionBook(), ctl: lb, backend: "local", tls: lb.tls, origin: js.where}
			for _, m := range lb.members {
				c.dirs = append(c.dirs, m.dir)
			}
			c.logVersion(t)
			if len(lb.restarted) > 0 {
				t.Logf("zktest: restarted member(s) %v, sent a snapshot at start, so that the quorum relay can hold their stream", lb.restarted)
			}
			return c
		}
		if !errors.Is(err, errPortClash) || attempt == 3 {
			t.Fatalf("zktest: start %d ZooKeeper server(s) (attempt %d): %v", cfg.servers, attempt, err)
		}
		t.Logf("zktest: port clash, retrying with new ports: %v", err)
	}
}

// boot picks ports, writes fresh configs and starts every member, then
// waits until the ensemble serves. On failure every started member is
// killed and the error wraps errPortClash if a bind failed.
func (lb *localBackend) boot() ([]string, error) {
	lb.closeRelays() // an earlier attempt's
	lb.restarted = nil
	n := lb.cfg.servers
	perMember := 3
	if n == 1 {
		perMember = 1
	}
	raw, err := freePorts(n * perMember)
	if err != nil {
		return nil, err
	}
	all := make([]ports, n)
	servers := make([]string, n)
	for i := range all {
		all[i].client = raw[i*perMember]
		if perMember == 3 {
			all[i].quorum, all[i].election = raw[i*perMember+1], raw[i*perMember+2]
		}
		servers[i] = net.JoinHostPort("127.0.0.1", strconv.Itoa(all[i].client))
	}
	views := make([][]ports, n)
	for i := range views {
		views[i] = all
	}
	if lb.cfg.quorumRelay && n > 1 {
		if lb.relays, err = startRelays(all); err != nil {
			return nil, err
		}
		views = lb.relays.view
	}
	lb.members = make([]*member, n)
	for i := range lb.members {
		m := &member{idx: i, dir: filepath.Join(lb.dir, "zk"+strconv.Itoa(i+1)), addr: servers[i]}
		if err := os.RemoveAll(m.dir); err != nil {
			return nil, err
		}
		if m.cfg, err = writeConfig(lb.cfg, m.dir, i, views[i]); err != nil {
			return nil, fmt.Errorf("zktest: write config: %w", err)
		}
		m.args = javaArgs(lb.cfg, lb.js, lb.dir, m.cfg, lb.tls, i)
		lb.members[i] = m
	}
	ctx, cancel := context.WithTimeout(context.Background(), lb.cfg.startTimeout)
	defer cancel()
	err = func() error {
		for i := range lb.members {
			if err := lb.spawn(i); err != nil {
				return err
			}
		}
		for i, m := range lb.members {
			if err := waitRuok(ctx, servers[i], m.proc, lb.clientTLS()); err != nil {
				return fmt.Errorf("server %d: %w", i, err)
			}
		}
		c := &Cluster{servers: servers, ctl: lb, tls: lb.tls}
		if err := c.WaitServing(ctx); err != nil {
			return err
		}
		if err := lb.resync(ctx, c); err != nil {
			return err
		}
		// A member that could not bind its election port (taken since
		// freePorts, by a connection's local port) serves at first and
		// exits a few seconds later: start again on other ports.
		for _, m := range lb.members {
			if !lb.live(m.idx) || m.proc.out.bindClash() {
				return fmt.Errorf("server %d is down or could not bind a port", m.idx)
			}
		}
		return nil
	}()
	if err != nil {
		clash := false
		for _, m := range lb.members {
			if m.proc != nil {
				clash = clash || m.proc.out.bindClash()
				err = fmt.Errorf("%w\n--- server %d output (tail) ---\n%s", err, m.idx, m.proc.out.Tail())
				_ = m.proc.kill()
				m.proc = nil
			}
		}
		if clash {
			err = fmt.Errorf("%w: %w", errPortClash, err)
		}
		lb.closeRelays()
		return nil, err
	}
	return servers, nil
}

// resync restarts each follower whose sync from the leader was a
// snapshot, which the relays pass unheld (SetLag could not hold it): a
// member that joins after the leader has committed transactions it cannot
// replay from memory (a slow start under load) is sent SNAP. Restarted, it
// has the leader's recent state on disk and is sent a DIFF. At most three
// rounds; a member still unheld after them is left for SetLag to report.
func (lb *localBackend) resync(ctx context.Context, c *Cluster) error {
	if lb.relays == nil {
		return nil
	}
	for range 3 {
		leader, err := c.Leader()
		if err != nil {
			return err
		}
		var snap []int
		for i := range lb.members {
			if i != leader && lb.relays.unheld[i].Load() {
				snap = append(snap, i)
			}
		}
		if len(snap) == 0 {
			return nil
		}
		for _, i := range snap {
			if err := lb.stop(i); err != nil {
				return err
			}
			if err := lb.start(i); err != nil {
				return err
			}
			lb.restarted = append(lb.restarted, i)
		}
		if err := c.WaitServing(ctx); err != nil {
			return err
		}
	}
	return nil
}

// closeRelays stops the quorum relays, if any.
func (lb *localBackend) closeRelays() {
	if lb.relays != nil {
		lb.relays.close()
		lb.relays = nil
	}
}

// lag sets how long member i's relays hold what a leader sends it.
func (lb *localBackend) lag(i int, d time.Duration) error {
	if lb.relays == nil {
		return fmt.Errorf("%w: SetLag needs a cluster of 2 or more members started WithQuorumRelay", ErrUnsupported)
	}
	lb.relays.lag[i].Store(int64(max(d, 0)))
	if d > 0 && lb.relays.unheld[i].Load() {
		return fmt.Errorf("zktest: member %d synced from a snapshot, which the relay cannot parse: its lag starts once it syncs again", i)
	}
	return nil
}

// spawn starts member i's process; the caller holds m.mu or owns m.
func (lb *localBackend) spawn(i int) error {
	m := lb.members[i]
	sink := newLogSink(fmt.Sprintf("zk%d ", i+1), lb.cfg.logOutput)
	p, err := startProcess(lb.js.java, m.args, m.dir, sink, lb.dir)
	if err != nil {
		return err
	}
	m.proc, m.paused = p, false
	return nil
}

// waitRuok polls addr until it answers ruok with imok, the process exits,
// or ctx ends.
func waitRuok(ctx context.Context, addr string, p *process, tc *tls.Config) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		out, err := fourLetterAt(qctx, addr, "ruok", tc)
		cancel()
		if err == nil && out == "imok" {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("process %d exited before serving: %v", p.pid, p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("no imok from %s: %w (last: %q, %v)", addr, ctx.Err(), out, err)
		case <-tick.C:
		}
	}
}

// running returns m's process, or ErrNotRunning; it notices a process that
// died on its own. The caller holds m.mu.
func (m *member) running() (*process, error) {
	if m.proc != nil && m.proc.done() {
		m.proc, m.paused = nil, false
	}
	if m.proc == nil {
		return nil, fmt.Errorf("%w (server %d)", ErrNotRunning, m.idx)
	}
	return m.proc, nil
}

func (lb *localBackend) withRunning(i int, f func(m *member, p *process) error) error {
	m := lb.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.running()
	if err != nil {
		return err
	}
	return f(m, p)
}

func (lb *localBackend) kill(i int) error {
	return lb.withRunning(i, func(m *member, p *process) error {
		m.proc, m.paused = nil, false
		return p.kill()
	})
}

func (lb *localBackend) stop(i int) error {
	return lb.withRunning(i, func(m *member, p *process) error {
		m.proc, m.paused = nil, false
		return p.terminate(10 * time.Second)
	})
}

func (lb *localBackend) pause(i int) error  { return lb.setPaused(i, true) }
func (lb *localBackend) resume(i int) error { return lb.setPaused(i, false) }

// setPaused sends running member i SIGSTOP (paused) or SIGCONT.
func (lb *localBackend) setPaused(i int, paused bool) error {
	sig, name := syscall.SIGCONT, "SIGCONT"
	if paused {
		sig, name = syscall.SIGSTOP, "SIGSTOP"
	}
	return lb.withRunning(i, func(m *member, p *process) error {
		if err := p.signal(sig); err != nil {
			return fmt.Errorf("zktest: %s server %d: %w", name, i, err)
		}
		m.paused = paused
		if paused {
			return p.waitStopped(i, 10*time.Second)
		}
		return nil
	})
}

func (lb *localBackend) live(i int) bool {
	m := lb.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	_, err := m.running()
	return err == nil && !m.paused
}

func (lb *localBackend) start(i int) error {
	m := lb.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.running(); err == nil {
		return fmt.Errorf("zktest: server %d is already running", i)
	}
	if err := lb.spawn(i); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), lb.cfg.startTimeout)
	defer cancel()
	if err := waitRuok(ctx, m.addr, m.proc, lb.clientTLS()); err != nil {
		clash := m.proc.out.bindClash()
		err = fmt.Errorf("zktest: restart server %d: %w\n--- output (tail) ---\n%s", i, err, m.proc.out.Tail())
		_ = m.proc.kill()
		m.proc = nil
		if clash {
			err = fmt.Errorf("%w (another process took its port): %w", errPortClash, err)
		}
		return err
	}
	return nil
}

// shutdown kills every member; it runs in the test's cleanup.
func (lb *localBackend) shutdown(t testing.TB) {
	for _, m := range lb.members {
		m.mu.Lock()
		if m.proc != nil {
			if m.proc.done() && !m.paused {
				t.Logf("zktest: server %d had exited on its own: %v\n%s", m.idx, m.proc.waitErr, m.proc.out.Tail())
			}
			if err := m.proc.kill(); err != nil {
				t.Errorf("zktest: cleanup: %v", err)
			}
			m.proc = nil
		}
		m.mu.Unlock()
	}
	if lb.relays != nil {
		lb.relays.close() // kept, not nil: SetLag may still be called
	}
}

func (lb *localBackend) clientTLS() *tls.Config { return lb.tls.harnessConfig() }
