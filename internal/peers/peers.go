// Package peers runs real Apache Curator (Java) and kazoo (Python) lock
// clients, of each Generation (bookworm's Curator 5.4.0 and kazoo 2.8.0,
// and Debian's newest), as child processes and drives them from Go tests, so that the
// zklock recipes can be checked for wire compatibility against the real thing.
//
// A peer is one process with one ZooKeeper session. It reads one command per
// line and answers each command with exactly one line, in order:
//
//	ok [TEXT]        success; Do returns TEXT
//	err MESSAGE      failure; Do returns an error carrying MESSAGE
//
// Things that happen later are reported as
//
//	event NAME KIND [ARG]
//
// and collected by WaitEvent. NAME is a caller-chosen object name (no
// spaces). Blocking work (acquire, leadership) runs on a thread of its own
// in the peer, so the command loop always answers promptly.
//
// Curator peer (Curator; CuratorNamespace for a client built with
// namespace(NS), whose PATHs and node paths are then all under /NS):
//
//	mutex NAME PATH              InterProcessMutex
//	rwread NAME PATH             read half of the InterProcessReadWriteLock on PATH
//	rwwrite NAME PATH            write half; both halves of one PATH in one peer share
//	                             one lock object and one thread, so a write holder can
//	                             take the read half (Curator's downgrade is per thread);
//	                             make halves contend from different peers
//	semmutex NAME PATH           InterProcessSemaphoreMutex
//	semaphore NAME PATH N        InterProcessSemaphoreV2 with N leases (one lease per NAME)
//	multi NAME P1,P2,...         InterProcessMultiLock over InterProcessMutex paths
//	acquire NAME [TIMEOUT_MS]    ok at once; later one of
//	                               event NAME acquired [NODE_PATH]
//	                               event NAME timeout
//	                               event NAME error MESSAGE
//	                             NODE_PATH is the full lock node path (mutex, rw
//	                             halves) or lease node path (semmutex, semaphore);
//	                             it is omitted for multi.
//	release NAME                 ok once released; err while an acquire of NAME (or of
//	                             the other half of its rw PATH) is pending
//	revocable NAME               makeRevocable on a mutex or rw half (before acquire);
//	                             a revocation request prints event NAME revoke-requested
//	                             and does not release anything
//	revoke NODE_PATH             Revoker.attemptRevoke
//	participants NAME            ok n1,n2,... (getParticipantNodes order; for a
//	                             semaphore the lease node names; for a leader the ids)
//	leader NAME PATH ID          LeaderSelector with setId(ID), no autoRequeue,
//	                             started; event NAME leader when takeLeadership
//	                             starts, event NAME notleader when it returns
//	resign NAME                  ends the leadership (err if not leader)
//	leaderid NAME                ok ID of the current leader (of a selector or a latch)
//	latch NAME PATH ID           LeaderLatch(PATH, ID), started; event NAME leader
//	                             OUR_PATH on isLeader, event NAME notleader on notLeader
//	                             (participants NAME gives the latch's ids)
//	haslatch NAME                ok true|false: hasLeadership()
//	closelatch NAME              LeaderLatch.close() (leaves the latch's queue)
//	where                        ok curator=JAR zookeeper=JAR zkversion=V: the jars
//	                             Curator and the ZooKeeper client were loaded from
//	quit                         closes everything, answers ok, exits 0 (EOF too)
//
// kazoo peer (Kazoo): lock NAME PATH [EXTRA], readlock NAME PATH [EXTRA],
// writelock NAME PATH [EXTRA] (kazoo Lock, ReadLock, WriteLock; EXTRA is a
// comma-separated extra_lock_patterns list or "-" for none; the identifier
// is NAME), acquire, release and quit as above (the acquired event carries
// the full node path), and contenders NAME (ok ["id1","id2",...], a JSON list).
// Plain znode commands (an intruder, a locked-down directory): addauth
// SCHEME CRED; create PATH MODE [ACL,...] (MODE persistent, ephemeral,
// ephseq or seq; ACL world:anyone:PERMS, auth::PERMS or
// digest:USER:PASSWORD:PERMS, PERMS letters of rwcda; ok PATH created);
// delete PATH; get PATH (ok DATA); set PATH DATA; children PATH (ok JSON).
//
// The peers need javac, java, Debian's Curator jars and /usr/bin/python3
// with kazoo: bookworm's packages, and the newer releases that
// scripts/fetch-newer.sh unpacks; `make deps` installs both.
package peers

import (
	"bufio"
	"context"
	_ "embed" // peer sources
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/proc"
)

//go:embed java/CuratorPeer.java
var curatorSource []byte

//go:embed kazoo_peer.py
var kazooSource []byte

const (
	// JarDir holds the Debian Curator, ZooKeeper and support jars.
	JarDir = "/usr/share/java"
	// Python is the interpreter that has Debian's python3-kazoo.
	Python = "/usr/bin/python3"

	replyTimeout = 30 * time.Second // Do
	startTimeout = 60 * time.Second // process start until "ready"
	eventTimeout = 60 * time.Second // WaitEvent when ctx has no deadline
	closeTimeout = 10 * time.Second // quit until exit, then SIGKILL
)

// Event is one "event NAME KIND [ARG]" line of a peer.
type Event struct {
	Name string // object name
	Kind string // acquired, timeout, error, leader, notleader, revoke-requested
	Arg  string // node path for acquired (may be empty), message for error
}

func (e Event) String() string {
	return strings.TrimSpace(e.Name + " " + e.Kind + " " + e.Arg)
}

// outcomes are the mutually exclusive results of one acquire.
var outcomes = map[string]bool{"acquired": true, "timeout": true, "error": true}

// Peer is one running Curator or kazoo process.
type Peer struct {
	label  string // "curator" or "kazoo", plus pid
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *proc.Tail

	doMu    sync.Mutex  // one command in flight at a time
	replies chan string // ok/err lines
	ready   chan struct{}
	done    chan struct{} // closed once stdout hit EOF and the process was reaped
	exitErr error         // valid after done

	mu         sync.Mutex
	events     []Event       // not yet consumed by WaitEvent
	changed    chan struct{} // closed and replaced whenever events grows
	broken     error         // set when a reply timed out: replies are out of step
	transcript *proc.Tail

	closeOnce sync.Once
}

// Curator starts a peer of the Newest generation; see Generation.Curator.
func Curator(t testing.TB, connect string, sessionTimeout time.Duration) *Peer {
	t.Helper()
	return Newest().Curator(t, connect, sessionTimeout)
}

// CuratorNamespace starts a peer of the Newest generation; see
// Generation.CuratorNamespace.
func CuratorNamespace(t testing.TB, connect string, sessionTimeout time.Duration, ns string) *Peer {
	t.Helper()
	return Newest().CuratorNamespace(t, connect, sessionTimeout, ns)
}

// startCurator starts java on the Curator peer with the JVM flags of every
// peer, then props (-D flags), the class path (the peer's classes, the
// generation's jars, then extraCP) and the peer's arguments: connect, the
// session timeout in ms and, if given, the namespace.
func (g *Generation) startCurator(t testing.TB, connect string, sessionTimeout time.Duration, props, extraCP []string, ns ...string) *Peer {
	t.Helper()
	classes, err := g.CompileJava("CuratorPeer", curatorSource)
	if err != nil {
		t.Fatalf("peers: cannot build the Curator %s peer: %v\n(install the interop test dependencies with `make deps`)", g.CuratorVersion, err)
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("peers: java not found: %v\n(install the interop test dependencies with `make deps`)", err)
	}
	cp := strings.Join(append([]string{classes, g.ClassPath()}, extraCP...), string(os.PathListSeparator))
	argv := append([]string{java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}, props...)
	argv = append(argv, "-cp", cp, "CuratorPeer", connect, strconv.FormatInt(sessionTimeout.Milliseconds(), 10))
	return start(t, "curator "+g.CuratorVersion, nil, append(argv, ns...)...)
}

// CuratorTLS starts a peer of the Newest generation; see
// Generation.CuratorTLS.
func CuratorTLS(t testing.TB, connect string, sessionTimeout time.Duration, caFile, keyStore string) *Peer {
	t.Helper()
	return Newest().CuratorTLS(t, connect, sessionTimeout, caFile, keyStore)
}

// CuratorTLS is Curator for servers that speak only TLS: the peer's
// ZooKeeper client uses ClientCnxnSocketNetty with
// zookeeper.client.secure=true, PEM trust store caFile and, when keyStore
// is not empty, the PEM key store keyStore (private key and certificate in
// one file) for servers that require client certificates. Host name
// verification stays on: the server certificate must name the address in
// connect.
func (g *Generation) CuratorTLS(t testing.TB, connect string, sessionTimeout time.Duration, caFile, keyStore string) *Peer {
	t.Helper()
	props := []string{
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		"-Dzookeeper.client.secure=true",
		"-Dzookeeper.ssl.trustStore.location=" + caFile,
		"-Dzookeeper.ssl.trustStore.type=PEM",
	}
	if keyStore != "" {
		props = append(props, "-Dzookeeper.ssl.keyStore.location="+keyStore, "-Dzookeeper.ssl.keyStore.type=PEM")
	}
	// Netty's TLS handler needs netty-codec, which the zookeeper jar's
	// manifest does not list.
	var extraCP []string
	for _, jar := range []string{"netty-codec.jar", "netty-resolver.jar", "netty-transport-native-unix-common.jar"} {
		if p := filepath.Join(JarDir, jar); fileExists(p) {
			extraCP = append(extraCP, p)
		}
	}
	return g.startCurator(t, connect, sessionTimeout, props, extraCP)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Kazoo starts a peer of the Newest generation; see Generation.Kazoo.
func Kazoo(t testing.TB, connect string, sessionTimeout time.Duration) *Peer {
	t.Helper()
	return Newest().Kazoo(t, connect, sessionTimeout)
}

// start runs argv as a peer of kind; env, when not nil, is its environment.
func start(t testing.TB, kind string, env []string, argv ...string) *Peer {
	t.Helper()
	p := &Peer{
		label:      kind,
		stderr:     proc.NewTail(64 << 10),
		transcript: proc.NewTail(32 << 10),
		replies:    make(chan string, 64),
		ready:      make(chan struct{}),
		done:       make(chan struct{}),
		changed:    make(chan struct{}),
	}
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = env
	p.cmd.SysProcAttr = sysProcAttr()
	p.cmd.Stderr = p.stderr
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatalf("peers: %v", err)
	}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("peers: %v", err)
	}
	p.stdin = stdin
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("peers: start %s peer: %v", kind, err)
	}
	p.label = fmt.Sprintf("%s peer (pid %d)", kind, p.cmd.Process.Pid)
	go p.readLoop(stdout)
	t.Cleanup(func() {
		p.Close()
		if t.Failed() {
			t.Logf("%s transcript:\n%s\n%s stderr:\n%s", p.label, p.transcript, p.label, p.stderr)
		}
	})

	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-p.ready:
		return p
	case <-p.done:
		t.Fatalf("peers: %s exited before it was ready: %v\nstderr:\n%s", p.label, p.exitErr, p.stderr)
	case <-timer.C:
		t.Fatalf("peers: %s not ready after %v\nstderr:\n%s", p.label, startTimeout, p.stderr)
	}
	return nil
}

// readLoop sorts the peer's stdout lines until EOF, then reaps the process.
func (p *Peer) readLoop(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		_, _ = io.WriteString(p.transcript, "< "+line+"\n")
		switch {
		case line == "ready":
			select {
			case <-p.ready:
			default:
				close(p.ready)
			}
		case strings.HasPrefix(line, "event "):
			f := strings.SplitN(line, " ", 4)
			e := Event{Name: f[1]}
			if len(f) > 2 {
				e.Kind = f[2]
			}
			if len(f) > 3 {
				e.Arg = f[3]
			}
			p.mu.Lock()
			p.events = append(p.events, e)
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
		case line == "ok" || strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "err"):
			select {
			case p.replies <- line:
			default: // nobody will read it: the peer is already marked broken
			}
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	p.exitErr = p.cmd.Wait()
	close(p.done)
}

// Do sends one command and waits (at most 30s) for its reply. It returns the
// text after "ok", or an error for "err ...", a dead peer or a timeout.
func (p *Peer) Do(cmd string) (string, error) {
	if strings.ContainsAny(cmd, "\r\n") {
		return "", fmt.Errorf("peers: command %q spans lines", cmd)
	}
	p.doMu.Lock()
	defer p.doMu.Unlock()
	p.mu.Lock()
	broken := p.broken
	p.mu.Unlock()
	if broken != nil {
		return "", broken
	}
	_, _ = io.WriteString(p.transcript, "> "+cmd+"\n")
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		return "", fmt.Errorf("peers: %s: send %q: %w%s", p.label, cmd, err, p.exitNote())
	}
	timer := time.NewTimer(replyTimeout)
	defer timer.Stop()
	var line string
	select {
	case line = <-p.replies:
	case <-p.done:
		select {
		case line = <-p.replies:
		default:
			return "", fmt.Errorf("peers: %s: %q: no reply%s", p.label, cmd, p.exitNote())
		}
	case <-timer.C:
		err := fmt.Errorf("peers: %s: %q: no reply within %v", p.label, cmd, replyTimeout)
		p.mu.Lock()
		p.broken = err
		p.mu.Unlock()
		return "", err
	}
	if msg, ok := strings.CutPrefix(line, "err"); ok {
		return "", fmt.Errorf("peers: %s: %q: %s", p.label, cmd, strings.TrimSpace(msg))
	}
	return strings.TrimSpace(strings.TrimPrefix(line, "ok")), nil
}

// Must is Do that fails the test on error. Call it from the test goroutine.
func (p *Peer) Must(t testing.TB, cmd string) string {
	t.Helper()
	out, err := p.Do(cmd)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// WaitEvent returns the next event of the given kind for object name,
// leaving other events buffered. acquired, timeout and error are the
// mutually exclusive outcomes of one acquire: while waiting for one of them,
// a different outcome for name is consumed and returned with an error, so a
// test fails at once instead of at its deadline. The wait ends with ctx
// (60s if ctx has no deadline) or when the peer exits.
func (p *Peer) WaitEvent(ctx context.Context, name, kind string) (Event, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, eventTimeout)
		defer cancel()
	}
	for {
		p.mu.Lock()
		for i, e := range p.events {
			if e.Name != name || (e.Kind != kind && !(outcomes[kind] && outcomes[e.Kind])) {
				continue
			}
			p.events = append(p.events[:i:i], p.events[i+1:]...)
			p.mu.Unlock()
			if e.Kind != kind {
				return e, fmt.Errorf("peers: %s: waiting for %s %s, got %q", p.label, name, kind, e)
			}
			return e, nil
		}
		changed := p.changed
		pending := append([]Event(nil), p.events...)
		p.mu.Unlock()

		select {
		case <-changed:
		case <-p.done:
			p.mu.Lock()
			grew := len(p.events) != len(pending)
			p.mu.Unlock()
			if !grew {
				return Event{}, fmt.Errorf("peers: %s: waiting for %s %s%s", p.label, name, kind, p.exitNote())
			}
		case <-ctx.Done():
			return Event{}, fmt.Errorf("peers: %s: waiting for %s %s: %w (unconsumed events: %v)",
				p.label, name, kind, ctx.Err(), pending)
		}
	}
}

// Buffered returns the events received but not yet consumed by WaitEvent.
func (p *Peer) Buffered() []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Event(nil), p.events...)
}

// Kill SIGKILLs the process and waits for it to be reaped. Its ZooKeeper
// session is not closed, so it expires on the server after the session
// timeout.
func (p *Peer) Kill() {
	_ = p.cmd.Process.Kill()
	p.waitDone(closeTimeout)
}

// Close asks the peer to quit (closing its session), waits up to 10s, and
// kills it if it is still running. It is idempotent; t.Cleanup calls it.
func (p *Peer) Close() {
	p.closeOnce.Do(func() {
		_ = p.stdin.Close() // EOF: the peer closes everything and exits
		if !p.waitDone(closeTimeout) {
			_ = p.cmd.Process.Kill()
			p.waitDone(closeTimeout)
		}
	})
}

// Pid is the peer's process id.
func (p *Peer) Pid() int { return p.cmd.Process.Pid }

func (p *Peer) waitDone(d time.Duration) bool { return proc.Wait(p.done, d) }

// exitNote describes a finished process; "" while it runs.
func (p *Peer) exitNote() string {
	select {
	case <-p.done:
		return fmt.Sprintf("; peer exited (%v); stderr:\n%s", p.exitErr, p.stderr)
	default:
		return ""
	}
}

// kazooScript checks that Python imports kazoo from pythonPath and writes
// the peer's script to os.TempDir (once per content).
func kazooScript(pythonPath string) (string, error) {
	if err := kazooImport(pythonPath); err != nil {
		return "", err
	}
	path := filepath.Join(os.TempDir(), "zklock-kazoo-peer-"+Digest(kazooSource)+".py")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	f, err := os.CreateTemp(os.TempDir(), "zklock-kazoo-peer-*.py")
	if err != nil {
		return "", err
	}
	_, err = f.Write(kazooSource)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path) // atomic; a concurrent writer wrote the same bytes
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", err
	}
	return path, nil
}
