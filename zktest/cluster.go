package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Errors returned by Cluster methods; test them with errors.Is.
var (
	// ErrUnsupported: the backend cannot do this (fault controls against
	// ZK_SERVERS). It also matches errors.ErrUnsupported.
	ErrUnsupported = fmt.Errorf("zktest: not supported by this backend: %w", errors.ErrUnsupported)
	// ErrNotRunning: the member is stopped or killed.
	ErrNotRunning = errors.New("zktest: server is not running")
	// ErrNoLeader: no live member reports Mode: leader (election under way,
	// or no quorum).
	ErrNoLeader = errors.New("zktest: no leader")
	// ErrUnknownSession: Expire was given a session id that no zktest
	// dialer or proxy of this Cluster has seen established.
	ErrUnknownSession = errors.New("zktest: session credentials not recorded")
	// ErrNoSession: the server no longer knows the session (it already
	// expired or was closed).
	ErrNoSession = errors.New("zktest: session is not live on the server")
)

// Environment variables that select a backend.
const (
	// EnvServers ("ZK_SERVERS", e.g. "10.0.0.1:2181,10.0.0.2:2181") makes
	// Start and StartEnsemble return a Cluster over that existing ensemble.
	EnvServers = "ZK_SERVERS"
	// EnvBackend ("ZKTEST_BACKEND") is "local" (the default and only
	// value; containers are github.com/zklock/zklock/zktest/containers).
	EnvBackend = "ZKTEST_BACKEND"
)

// controller is implemented by backends that control server processes.
type controller interface {
	kill(i int) error
	stop(i int) error
	start(i int) error
	pause(i int) error
	resume(i int) error
	live(i int) bool // started and not paused: expected to answer
}

// Cluster is a ZooKeeper standalone server or ensemble for one test. All
// methods are safe for concurrent use. Servers are stopped by the test's
// cleanup, also when the test fails or panics.
type Cluster struct {
	cfg     config
	servers []string
	book    *sessionBook
	ctl     controller // nil: no fault control (ZK_SERVERS)
	backend string
	dirs    []string // per-member directories (local backend)
	tls     *TLS     // WithTLS: the key material; nil for plaintext
	origin  string   // local backend: where its server was found
}

// Start starts a standalone ZooKeeper server (or WithServers(n) servers)
// and returns when it serves requests. It fails the test (t.Fatal, so it
// must be called from the test's goroutine) when the servers cannot be
// started within the start timeout; when java or ZooKeeper is missing the
// error (wrapping ErrNoServer) lists where it looked and how to install
// them.
//
// The backend is chosen by the environment: ZK_SERVERS=host:port,... uses
// that existing ensemble (options other than the start timeout are then
// ignored, and fault controls return ErrUnsupported); otherwise local java
// processes on 127.0.0.1 with free ports and a fresh data directory under
// t.TempDir().
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	return start(t, 1, opts)
}

// StartEnsemble is Start with 3 servers unless WithServers says otherwise.
func StartEnsemble(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	return start(t, 3, opts)
}

func start(t testing.TB, n int, opts []Option) *Cluster {
	t.Helper()
	cfg := defaultConfig(n)
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.servers < 1 {
		t.Fatalf("zktest: WithServers(%d): need at least 1 server", cfg.servers)
	}
	if len(cfg.tlsNames) > 0 && len(cfg.tlsNames) != cfg.servers {
		t.Fatalf("zktest: WithTLSHostNames: %d names for %d servers: give one per server", len(cfg.tlsNames), cfg.servers)
	}
	if b := os.Getenv(EnvBackend); cfg.tls && (os.Getenv(EnvServers) != "" || (b != "" && b != "local")) {
		t.Skipf("zktest: WithTLS needs the local backend (it writes the servers' TLS configuration); unset %s and %s", EnvServers, EnvBackend)
	}
	if list := os.Getenv(EnvServers); list != "" {
		return startExternal(t, cfg, list)
	}
	switch b := os.Getenv(EnvBackend); b {
	case "", "local":
		return startLocal(t, cfg)
	case "docker":
		t.Fatalf("zktest: %s=docker: the docker CLI backend is gone; use github.com/zklock/zklock/zktest/containers (containers.Start(t, ...), on testcontainers-go)", EnvBackend)
		return nil
	default:
		t.Fatalf("zktest: %s=%q: want \"local\" (containers: github.com/zklock/zklock/zktest/containers)", EnvBackend, b)
		return nil
	}
}

// Size returns the number of servers.
func (c *Cluster) Size() int { return len(c.servers) }

// Servers returns each member's client address ("127.0.0.1:port" for the
// local backend), in index order. The addresses do not change when a
// member is restarted.
func (c *Cluster) Servers() []string { return append([]string(nil), c.servers...) }

// ConnectString returns all members' addresses, comma-separated, as Java
// and Python clients expect.
func (c *Cluster) ConnectString() string { return strings.Join(c.servers, ",") }

// Backend returns "local", "external" (ZK_SERVERS), or the name another
// backend gave NewCluster ("containers").
func (c *Cluster) Backend() string { return c.backend }

// DataDir returns member i's directory (its zoo.cfg and data/), or "" when
// the backend has no local directory. It is never wiped between restarts.
func (c *Cluster) DataDir(i int) string {
	if i < 0 || i >= len(c.dirs) {
		return ""
	}
	return c.dirs[i]
}

// RequireFaults skips the test (t.Skip) unless the backend supports Kill,
// Stop, Start, Restart, Pause, Resume and Leader.
func (c *Cluster) RequireFaults(t testing.TB) {
	t.Helper()
	if c.ctl == nil {
		t.Skipf("zktest: this test injects server faults, which the %s backend (%s=%s) cannot do", c.backend, EnvServers, c.ConnectString())
	}
}

func (c *Cluster) control(i int) (controller, error) {
	if c.ctl == nil {
		return nil, fmt.Errorf("%w (%s backend)", ErrUnsupported, c.backend)
	}
	if i < 0 || i >= len(c.servers) {
		return nil, fmt.Errorf("zktest: server index %d out of range [0,%d)", i, len(c.servers))
	}
	return c.ctl, nil
}

// onMember calls fault on member i's controller (see control).
func (c *Cluster) onMember(i int, fault func(controller, int) error) error {
	ctl, err := c.control(i)
	if err != nil {
		return err
	}
	return fault(ctl, i)
}

// Kill sends SIGKILL to member i and waits until the process is gone. Its
// data directory is kept. It returns ErrNotRunning if i is not running.
func (c *Cluster) Kill(i int) error { return c.onMember(i, controller.kill) }

// Stop sends SIGTERM to member i (resuming it first if paused) and waits
// for it to exit, escalating to SIGKILL after 10s.
func (c *Cluster) Stop(i int) error { return c.onMember(i, controller.stop) }

// Start starts member i again, with its old port and data directory, and
// waits until the ensemble serves (every live member reports a Mode in
// `srvr`), bounded by the start timeout. If fewer than a majority of the
// members are then running, the ensemble cannot serve, and Start returns
// as soon as the process answers `ruok`. Starting a running member is an
// error.
func (c *Cluster) Start(i int) error {
	ctl, err := c.control(i)
	if err != nil {
		return err
	}
	if err := ctl.start(i); err != nil {
		return err
	}
	live := 0
	for j := range c.servers {
		if ctl.live(j) {
			live++
		}
	}
	if live <= len(c.servers)/2 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.startTimeout)
	defer cancel()
	return c.WaitServing(ctx)
}

// Restart stops member i (if running) and starts it again (see Stop, Start).
func (c *Cluster) Restart(i int) error {
	if err := c.Stop(i); err != nil && !errors.Is(err, ErrNotRunning) {
		return err
	}
	return c.Start(i)
}

// Pause sends SIGSTOP to member i: it keeps its sockets open but answers
// nothing, like a long GC pause. Pausing a paused member does nothing.
func (c *Cluster) Pause(i int) error { return c.onMember(i, controller.pause) }

// Resume sends SIGCONT to a paused member i. It does not wait for the member
// to rejoin the ensemble; call WaitServing for that.
func (c *Cluster) Resume(i int) error { return c.onMember(i, controller.resume) }

// liveMembers returns the indexes expected to answer: all of them without
// fault control, else the started, unpaused ones.
func (c *Cluster) liveMembers() []int {
	var out []int
	for i := range c.servers {
		if c.ctl == nil || c.ctl.live(i) {
			out = append(out, i)
		}
	}
	return out
}

// lagger is implemented by backends that can hold back a follower.
type lagger interface {
	lag(i int, d time.Duration) error
}

// SetLag makes member i lag d behind its leader: what the leader sends it
// (proposals, commits, syncs) is held for d from the moment the relay
// reads it, in order, while pings and session revalidations pass at once.
// Member i so keeps serving its clients, sessions that move to it
// included, from a state about d old, as a follower with a backlog of
// commits does: ZooKeeper lets a client see that view when it has seen no
// later zxid, and a sync through member i waits until the backlog has
// been applied. Zero ends the lag (what is held still arrives in order).
// It needs a cluster started WithQuorumRelay (ErrUnsupported otherwise)
// and does nothing while i leads. A follower that is sent a snapshot when
// it syncs (SNAP) is not held on that connection, and SetLag returns an
// error saying so. A fresh ensemble's followers are held: the start
// restarts a follower that was sent a snapshot (one that joined late), so
// that it syncs again by DIFF.
//
// Caution: a session's requests at member i are answered in order, so its
// pings wait behind its own writes and syncs, each of which takes d; keep
// d below the clients' read timeout (two thirds of the session timeout
// for go-zookeeper), or their connections to i time out. Creating a
// session is such a write: sessions made at i while it lags connect d
// late.
func (c *Cluster) SetLag(i int, d time.Duration) error {
	ctl, err := c.control(i)
	if err != nil {
		return err
	}
	l, ok := ctl.(lagger)
	if !ok {
		return fmt.Errorf("%w (SetLag, %s backend)", ErrUnsupported, c.backend)
	}
	return l.lag(i, d)
}
