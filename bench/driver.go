package bench

import (
	"bufio"
	_ "embed" // driver sources
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/proc"

	"github.com/zklock/zklock/internal/peers"
)

//go:embed java/CuratorBench.java
var curatorSource []byte

//go:embed kazoo_bench.py
var kazooSource []byte

const (
	python      = "/usr/bin/python3"
	replyWait   = 3 * time.Minute // the longest command (a 1000-waiter herd) takes seconds
	startupWait = time.Minute
)

// curatorClasses compiles CuratorBench.java once, as internal/peers
// compiles its peer, and returns the class directory.
var curatorClasses = sync.OnceValues(func() (string, error) { return peers.CompileJava("CuratorBench", curatorSource) })

var kazooScript = sync.OnceValues(func() (string, error) {
	p := filepath.Join(os.TempDir(), "zklock-kazoo-bench-"+peers.Digest(kazooSource)+".py")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	tmp := fmt.Sprintf("%s.%d", p, os.Getpid())
	if err := os.WriteFile(tmp, kazooSource, 0o600); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
})

// driver is a Curator or kazoo process running the measurement loops of
// one recipe; it implements the same measurements as goTarget.
type driver struct {
	name, recipe string
	proc         *process
}

// process is one running driver, shared by the recipes of its language.
type process struct {
	label  string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *proc.Tail
	// version is what the driver's "ready" line names after the word
	// (kazoo's release; "" for Curator's driver).
	version string
}

// startCurator starts the Curator driver connected to connect.
func startCurator(connect string) (*process, error) {
	classes, err := curatorClasses()
	if err != nil {
		return nil, err
	}
	argv, err := javaArgv("512m", classes, "CuratorBench", connect, strconv.FormatInt(sessionTimeout.Milliseconds(), 10))
	if err != nil {
		return nil, err
	}
	return startProcess("curator", nil, argv...)
}

// javaArgv runs class from the directory classes, Curator's jars on the
// class path, with a heap of at most heap ("512m").
func javaArgv(heap, classes, class string, args ...string) ([]string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("java not found (run `make deps`): %w", err)
	}
	return append([]string{java, "-Xmx" + heap, "-Xss512k", "-XX:+UseSerialGC",
		"-cp", classes + string(os.PathListSeparator) + peers.ClassPath(), class}, args...), nil
}

// startKazoo starts the kazoo driver connected to connect, on the kazoo
// of internal/peers' Newest generation.
func startKazoo(connect string) (*process, error) {
	script, err := kazooScript()
	if err != nil {
		return nil, err
	}
	g := peers.Newest()
	p, err := startProcess("kazoo", g.Env(), python, "-u", script, connect, strconv.FormatInt(sessionTimeout.Milliseconds(), 10))
	if err == nil && p.version != g.KazooVersion {
		p.close()
		return nil, fmt.Errorf("bench: the kazoo driver imported kazoo %q, not the %s of internal/peers' Newest (run `make deps`)", p.version, g.KazooVersion)
	}
	return p, err
}

// startProcess starts a driver with environment env (nil: this
// process's) and waits for its "ready".
func startProcess(label string, env []string, argv ...string) (*process, error) {
	p := &process{label: label, lines: make(chan string, 4), stderr: proc.NewTail(4000)}
	var stdout io.ReadCloser
	var err error
	if p.cmd, p.stdin, stdout, err = startPipedEnv(label+" driver", env, argv, p.stderr); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	line, err := p.read(startupWait)
	word, version, _ := strings.Cut(line, " ")
	if err != nil || word != "ready" {
		p.close()
		return nil, fmt.Errorf("bench: %s driver did not start (%q, %v): %s", label, line, err, p.stderr.String())
	}
	p.version = version
	return p, nil
}

// startPiped starts the process what of argv, with pipes to its stdin
// and from its stdout, and its stderr kept in stderr.
func startPiped(what string, argv []string, stderr *proc.Tail) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	return startPipedEnv(what, nil, argv, stderr)
}

// startPipedEnv is startPiped with environment env (nil: this process's).
func startPipedEnv(what string, env, argv []string, stderr *proc.Tail) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("bench: start %s: %w", what, err)
	}
	return cmd, stdin, stdout, nil
}

func (p *process) read(wait time.Duration) (string, error) {
	select {
	case line, ok := <-p.lines:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	case <-time.After(wait):
		return "", errors.New("timed out")
	}
}

// do sends one command and decodes its JSON answer into v.
func (p *process) do(v any, args ...any) error {
	cmd := strings.TrimSpace(fmt.Sprintln(args...))
	if _, err := io.WriteString(p.stdin, cmd+"\n"); err != nil {
		return fmt.Errorf("bench: %s driver: send %q: %w: %s", p.label, cmd, err, p.stderr.String())
	}
	line, err := p.read(replyWait)
	if err != nil {
		return fmt.Errorf("bench: %s driver: %q: %w: %s", p.label, cmd, err, p.stderr.String())
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		return fmt.Errorf("bench: %s driver: %q: bad reply %q", p.label, cmd, line)
	}
	if e.Error != "" {
		return fmt.Errorf("bench: %s driver: %q: %s", p.label, cmd, e.Error)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal([]byte(line), v)
}

// close asks the driver to quit and kills it if it does not within 10s.
func (p *process) close() {
	_, _ = io.WriteString(p.stdin, "quit\n")
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() {
		for range p.lines { //nolint:revive // drain until EOF
		}
		_ = p.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

type timedReply struct {
	Ops       int     `json:"ops"`
	ElapsedNs int64   `json:"elapsed_ns"`
	LatNs     []int64 `json:"lat_ns"`
}

func (t timedReply) run() Run {
	r := Run{Ops: t.Ops, Elapsed: time.Duration(t.ElapsedNs), Lat: make([]time.Duration, len(t.LatNs))}
	for i, l := range t.LatNs {
		r.Lat[i] = time.Duration(l)
	}
	r.finish()
	return r
}

func (d *driver) Name() string { return d.name }

func (d *driver) clientPID() string { return strconv.Itoa(d.proc.cmd.Process.Pid) }

func (d *driver) Uncontended(server, path string, warm, dur time.Duration) (Run, error) {
	var t timedReply
	err := d.proc.do(&t, "uncontended", d.recipe, server, path, warm.Milliseconds(), dur.Milliseconds())
	return t.run(), err
}

func (d *driver) Contended(servers []string, path string, sessions, workers int, dur time.Duration) (Run, error) {
	var t timedReply
	err := d.proc.do(&t, "contended", d.recipe, strings.Join(servers, ","), path, sessions, workers, dur.Milliseconds())
	return t.run(), err
}

func (d *driver) HerdPrepare(server, path string, n int) error {
	return d.proc.do(nil, "herd_prepare", d.recipe, server, path, n)
}

func (d *driver) HerdGo() (time.Duration, error) {
	var t timedReply
	err := d.proc.do(&t, "herd_go")
	return time.Duration(t.ElapsedNs), err
}

func (d *driver) HerdClose() { _ = d.proc.do(nil, "herd_close") }
