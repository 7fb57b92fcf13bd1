package reliability

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/zktest"
)

// Binaries are the worker and register executables, built from this module.
type Binaries struct{ Worker, Register string }

var (
	buildOnce sync.Once
	buildBins Binaries
	buildErr  error
	buildDir  string
)

// Build compiles cmd/worker and cmd/register once per process (with the
// zklock_negative tag in a negative build) into a temporary directory;
// CleanBuild removes it.
func Build() (Binaries, error) {
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "zklock-reliability-bin-")
		if buildErr != nil {
			return
		}
		args := []string{"build", "-o", buildDir + "/"}
		if NegativeBuild {
			args = append(args, "-tags", "zklock_negative")
		}
		args = append(args, "github.com/zklock/zklock/reliability/cmd/worker", "github.com/zklock/zklock/reliability/cmd/register")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		buildBins = Binaries{Worker: filepath.Join(buildDir, "worker"), Register: filepath.Join(buildDir, "register")}
	})
	return buildBins, buildErr
}

// CleanBuild removes the binaries built by Build.
func CleanBuild() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Proc is a child process of the suite: a worker or the register.
type Proc struct {
	Name  string
	Cmd   *exec.Cmd
	stdin io.WriteCloser
	Log   string        // its JSONL history
	Proxy *zktest.Proxy // workers with a proxy of their own
	done  chan error
	first chan string // its first stdout line

	stopOnce sync.Once
	stopErr  error
}

func startProc(name, bin, logPath string, env []string, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitWriter{w: &stderr, n: 8 << 10}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Name: name, Cmd: cmd, stdin: stdin, Log: logPath, done: make(chan error, 1), first: make(chan string, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			p.first <- sc.Text()
		}
		close(p.first)
		io.Copy(io.Discard, stdout)
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("%s: %w: %s", name, err, stderr.String())
		}
		p.done <- err
	}()
	return p, nil
}

type limitWriter struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (l *limitWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(b), l.n)
		l.w.Write(b[:k])
		l.n -= k
	}
	return len(b), nil
}

// started waits for the worker's "started" line.
func (p *Proc) started() error {
	if l, ok := <-p.first; !ok || l != "started" {
		return fmt.Errorf("%s did not start: %v", p.Name, <-p.done)
	}
	return nil
}

// Kill SIGKILLs the process and waits for it; a later Stop does nothing.
func (p *Proc) Kill() {
	p.stopOnce.Do(func() {
		p.Cmd.Process.Kill()
		<-p.done
	})
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.Cmd.Process.Signal(sig) }

// Stop asks the process to finish (stdin closed, SIGCONT, SIGTERM) and waits
// up to grace before killing it. It returns the process's exit error.
func (p *Proc) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(grace) })
	return p.stopErr
}

func (p *Proc) stop(grace time.Duration) error {
	p.stdin.Close()
	p.Signal(syscall.SIGCONT)
	p.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(grace):
		p.Cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %v: killed", p.Name, grace)
	}
}

// Env is one scenario's running system.
type Env struct {
	T       testing.TB
	Sc      *Scenario
	Dir     string
	C       *zktest.Cluster
	Conn    *zk.Conn // the suite's own observer connection
	Root    string
	Workers []*Proc
	Reg     *Proc
	Nem     *Log
	faults  int
	mu      sync.Mutex

	bins      Binaries
	regAddr   string         // the register process's address ("": none)
	pgDSN     string         // the PostgreSQL register's database ("": none)
	restarts  map[string]int // worker label -> processes started after kills
	extraLogs []string       // logs of workers started by the nemesis
	errs      []string       // what the nemesis found wrong (Errorf)
}

// Errorf records something the nemesis found wrong, reported with the
// scenario's errors (Result.Errors), which fail it.
func (e *Env) Errorf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

// errors returns what Errorf recorded.
func (e *Env) errors() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.errs...)
}

// Fault runs one fault: logs its start, calls begin, waits d, calls end and
// logs its end. The wait is not cut short: every fault is healed.
func (e *Env) Fault(name, target string, d time.Duration, begin, end func() error) {
	e.Nem.Add(Event{Kind: KindFaultStart, Fault: name, Target: target})
	e.mu.Lock()
	e.faults++
	e.mu.Unlock()
	if err := begin(); err != nil {
		e.T.Logf("%s: fault %s %s: %v", e.Sc.Name, name, target, err)
	}
	time.Sleep(d)
	if end != nil {
		if err := end(); err != nil {
			e.T.Errorf("%s: healing %s %s: %v", e.Sc.Name, name, target, err)
		}
	}
	e.Nem.Add(Event{Kind: KindFaultEnd, Fault: name, Target: target})
}

// Faults returns how many faults were injected.
func (e *Env) Faults() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.faults
}

// Every runs f every period (after a first wait) until ctx ends.
func Every(ctx context.Context, period time.Duration, f func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// seqRe finds a node name's trailing ten-digit sequence.
var seqRe = regexp.MustCompile(`\d{10}$`)

// Holder returns the worker holding a random lock right now (the data of the
// lowest node), its node and its session, or ok=false.
func (e *Env) Holder() (worker, node string, sid int64, ok bool) {
	if e.Sc.Recipe == "schedule" { // the schedule's leader (schedule.go)
		return e.holderAt(SchedulePath(e.Root) + "/leader")
	}
	return e.holderAt(LockPath(e.Root, rand.IntN(e.Sc.Locks)))
}

// holderAt is Holder for the lock at p.
func (e *Env) holderAt(p string) (worker, node string, sid int64, ok bool) {
	if e.Sc.Recipe == "semmutex" {
		p += "/leases" // whoever has a lease node holds
	}
	children, _, err := e.Conn.Children(p)
	if err != nil || len(children) == 0 {
		return "", "", 0, false
	}
	sort.Slice(children, func(i, j int) bool { return seqOf(children[i]) < seqOf(children[j]) })
	node = p + "/" + children[0]
	data, st, err := e.Conn.Get(node)
	if err != nil {
		return "", "", 0, false
	}
	return string(data), node, st.EphemeralOwner, true
}

// seqOf returns a node name's sequence: "x-lock-0000000004" and
// "x-__READ__0000000004" are 4, "x-lock--2147483648" (a wrapped counter) is
// negative. The dash that separates "lock" from the digits is not a sign.
func seqOf(name string) int64 {
	m := seqRe.FindStringIndex(name)
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(name[m[0]:], 10, 64)
	if strings.HasSuffix(name[:m[0]], "--") {
		n = -n
	}
	return n
}

// Worker returns the worker process with the given label.
func (e *Env) Worker(name string) *Proc {
	for _, w := range e.Workers {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// finalState waits for the lock paths to empty and the servers' watches to
// drop to zero, then reports what is left (C5).
func (e *Env) finalState() *FinalState {
	f := &FinalState{Children: map[string][]string{}, Watches: map[string]int{}, Ephemerals: map[string][]string{}, Registers: map[string]RegisterRead{}}
	deadline := time.Now().Add(e.Sc.Session + 5*time.Second)
	for i := range e.Sc.Locks {
		if r, err := e.readRegister(i); err != nil {
			f.Errors = append(f.Errors, err.Error())
		} else {
			f.Registers[LockPath(e.Root, i)] = r
		}
	}
	for i := range e.Sc.Locks {
		p := LockPath(e.Root, i)
		var children []string
		err := until(deadline, func() (bool, error) {
			var err error
			children, _, err = e.Conn.Children(p)
			if errors.Is(err, zk.ErrNoNode) {
				children, err = nil, nil
			}
			return err == nil && len(children) == 0, err
		})
		if err != nil {
			f.Errors = append(f.Errors, fmt.Sprintf("list %s: %v", p, err))
		}
		if len(children) > 0 {
			f.Children[p] = children
		}
	}
	if e.Sc.Recipe == "schedule" {
		f.readClaims(e.Conn, e.Root)
	}
	for i := range e.C.Size() {
		server := strconv.Itoa(i)
		var left []string
		if err := until(deadline, func() (bool, error) {
			out, err := e.C.FourLetter(i, "dump")
			left = ephemeralsUnder(out, e.Root+"/")
			return err == nil && len(left) == 0, err
		}); err != nil {
			f.Errors = append(f.Errors, fmt.Sprintf("dump on server %d: %v", i, err))
		}
		if len(left) > 0 {
			f.Ephemerals[server] = left
		}
		n := -1
		if err := until(deadline, func() (bool, error) {
			out, err := e.C.FourLetter(i, "wchs")
			n = -1
			if err == nil {
				n = totalWatches(out)
			}
			return n == 0, err
		}); err != nil {
			f.Errors = append(f.Errors, fmt.Sprintf("wchs on server %d: %v", i, err))
		}
		f.Watches[server] = n
	}
	return f
}

// until polls check every 50 ms until it reports done or deadline passes,
// and returns the error of its last call.
func until(deadline time.Time, check func() (bool, error)) error {
	for {
		done, err := check()
		if done || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readRegister reads lock i's ZooKeeper register after a sync, so that the
// read is not served from behind the last write.
func (e *Env) readRegister(i int) (RegisterRead, error) {
	p := RegisterPath(e.Root, i)
	r := RegisterRead{T0: Mono()}
	if _, err := e.Conn.Sync(p); err != nil {
		return r, fmt.Errorf("sync %s: %w", p, err)
	}
	data, st, err := e.Conn.Get(p)
	if err != nil {
		return r, fmt.Errorf("read %s: %w", p, err)
	}
	r.T, r.Ver, r.Data = Mono(), st.Version, string(data)
	return r, nil
}

// ephemeralsUnder returns the ephemeral nodes under prefix in a dump answer
// (its "ephemeral nodes dump" section lists each session's nodes, indented).
func ephemeralsUnder(dump, prefix string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(dump, "\n") {
		switch {
		case strings.HasPrefix(line, "ephemeral nodes dump"):
			in = true
		case strings.HasPrefix(line, "Connections dump"):
			in = false
		case in && strings.HasPrefix(strings.TrimSpace(line), prefix):
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

var totalRe = regexp.MustCompile(`Total watches:\s*(\d+)`)

func totalWatches(wchs string) int {
	m := totalRe.FindStringSubmatch(wchs)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
