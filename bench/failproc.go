package bench

import (
	"bufio"
	_ "embed" // the Curator leader process's source
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/proc"

	"github.com/zklock/zklock/internal/peers"
)

//go:embed java/CuratorFailover.java
var curatorFailoverSource []byte

var curatorFailoverClasses = sync.OnceValues(func() (string, error) {
	return peers.CompileJava("CuratorFailover", curatorFailoverSource)
})

// Languages of the leader processes.
const (
	langGo   = "go"   // bench/leaderworker: zklock and the floor
	langJava = "java" // java/CuratorFailover.java: Curator
)

// fevent is one line of a leader process (see bench/leaderworker), with
// the process it came from.
type fevent struct {
	Ev     string `json:"ev"`
	ID     string `json:"id"`
	T      int64  `json:"t"`
	Why    string `json:"why"`
	State  string `json:"state"`
	Server string `json:"server"`
	Heard  int64  `json:"heard"` // zklock's conn lines: when bytes last came from a server (0: never)
	Sid    string `json:"sid"`
	Msg    string `json:"msg"`
	proc   *leaderProc
}

// eventLog collects the lines of every leader process of a phase, in
// arrival order, and wakes whoever waits for one.
type eventLog struct {
	mu      sync.Mutex
	evs     []fevent
	changed chan struct{}
}

func newEventLog() *eventLog { return &eventLog{changed: make(chan struct{})} }

func (l *eventLog) add(e fevent) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// since returns the events from index i on, and the index after them.
func (l *eventLog) since(i int) ([]fevent, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]fevent(nil), l.evs[i:]...), len(l.evs)
}

// len is the number of events so far.
func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.evs)
}

// wait calls ok with every event from index from on until it returns true
// (nil), or fails after timeout, or with an error event of those.
func (l *eventLog) wait(from int, timeout time.Duration, what string, ok func(fevent) bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for i := from; ; {
		l.mu.Lock()
		evs, changed := l.evs[i:], l.changed
		i = len(l.evs)
		l.mu.Unlock()
		for _, e := range evs {
			if e.Ev == "error" {
				return fmt.Errorf("bench: %s: %s %s: %s", what, e.proc.lang, e.ID, e.Msg)
			}
			if ok(e) {
				return nil
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("bench: %s: timed out after %v", what, timeout)
		}
	}
}

// leaderProc is one leader process: zklock's worker or Curator's.
type leaderProc struct {
	lang   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *proc.Tail
	done   chan struct{} // closed when its output has ended
	killed bool
}

// leaderBinary builds bench/leaderworker into dir.
func leaderBinary(dir string) (string, error) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("bench: the go tool, to build bench/leaderworker: %w", err)
		}
	}
	bin := filepath.Join(dir, "leaderworker")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/zklock/zklock/bench/leaderworker").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("bench: build bench/leaderworker: %w: %s", err, out)
	}
	return bin, nil
}

// startLeaderProc starts a leader process of lang (bin is the Go worker),
// feeding its lines into log, and checks that its clock is this one's.
func startLeaderProc(lang, bin string, log *eventLog) (*leaderProc, error) {
	argv, err := leaderArgv(lang, bin)
	if err != nil {
		return nil, err
	}
	p := &leaderProc{lang: lang, done: make(chan struct{}), stderr: proc.NewTail(4000)}
	from := log.len()
	var stdout io.ReadCloser
	if p.cmd, p.stdin, stdout, err = startPiped(lang+" leader process", argv, p.stderr); err != nil {
		return nil, err
	}
	go p.feed(stdout, log)
	if err := log.wait(from, startupWait, lang+" leader process start", func(e fevent) bool { return e.proc == p && e.Ev == "ready" }); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w: %s", err, p.stderr.String())
	}
	if err := p.checkClock(log); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// leaderArgv is the command line of a leader process of lang.
func leaderArgv(lang, bin string) ([]string, error) {
	switch lang {
	case langGo:
		return []string{bin}, nil
	case langJava:
		classes, err := curatorFailoverClasses()
		if err != nil {
			return nil, err
		}
		return javaArgv("256m", classes, "CuratorFailover")
	}
	return nil, fmt.Errorf("bench: unknown language %q", lang)
}

// feed adds the process's lines to log until its output ends, then waits
// for it.
func (p *leaderProc) feed(stdout io.Reader, log *eventLog) {
	defer close(p.done)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var e fevent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			e = fevent{Ev: "error", Msg: "bad line " + sc.Text()}
		}
		e.proc = p
		log.add(e)
	}
	_ = p.cmd.Wait()
}

// checkClock asks the process for its clock: the reading must fall
// between two of ours.
func (p *leaderProc) checkClock(log *eventLog) error {
	from := log.len()
	t0 := mono()
	p.send("clock")
	var t int64
	if err := log.wait(from, startupWait, p.lang+" clock", func(e fevent) bool {
		if e.proc == p && e.Ev == "clock" {
			t = e.T
			return true
		}
		return false
	}); err != nil {
		return err
	}
	if t1 := mono(); t < t0 || t > t1 {
		return fmt.Errorf("bench: the %s leader process's clock (%d) is not CLOCK_MONOTONIC (%d..%d)", p.lang, t, t0, t1)
	}
	return nil
}

// send writes one command line; a process that is gone ignores it.
func (p *leaderProc) send(args ...any) {
	_, _ = io.WriteString(p.stdin, strings.TrimSpace(fmt.Sprintln(args...))+"\n")
}

// kill is kill -9, and waits until the process is gone.
func (p *leaderProc) kill() {
	p.killed = true
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop asks the process to quit, killing it after 10 s.
func (p *leaderProc) stop() {
	if p.killed {
		return
	}
	p.send("quit")
	_ = p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.kill()
	}
}

// errNoClock: the failover phase needs CLOCK_MONOTONIC (Linux).
var errNoClock = errors.New("bench: the failover phase needs Linux (CLOCK_MONOTONIC shared by processes)")
