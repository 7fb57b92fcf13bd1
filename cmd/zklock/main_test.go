package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	iproc "github.com/zklock/zklock/internal/proc"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// zklockBin is the command under test, built once by TestMain.
var zklockBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zklock-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	zklockBin = filepath.Join(dir, "zklock")
	args := []string{"build"}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "-o", zklockBin, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build zklock: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// proc is a running zklock.
type proc struct {
	cmd    *exec.Cmd
	stdout *iproc.Buffer
	stderr *iproc.Buffer
	done   chan struct{} // closed when the process has exited
	start  time.Time
	dur    time.Duration // how long it ran, once done
}

// hermeticEnv is the test's environment without ZKLOCK_* variables, plus env.
func hermeticEnv(env []string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZKLOCK_") {
			out = append(out, kv)
		}
	}
	// A race report never changes zklock's exit status here; wait reads
	// the reports from stderr instead (see ourRaces). A race build sleeps
	// 1 s at exit by default (atexit_sleep_ms), so that a report under way
	// in another goroutine is finished: 50 ms does that too, and a test
	// that runs thirty commands does not wait thirty seconds.
	return append(append(out, "GORACE=exitcode=0 atexit_sleep_ms=50"), env...)
}

// upstreamRace is go-zookeeper's own race on Conn.lastZxid, between its
// receive loop and the SetWatches it sends after a reconnect
// (go-zookeeper/zk#35, unfixed in v1.0.4): a report with both frames is
// not zklock's.
var upstreamRace = []string{"zk.(*Conn).recvLoop()", "zk.(*Conn).sendSetWatches()"}

// ourRaces returns the race detector's reports in stderr, less
// upstreamRace's.
func ourRaces(stderr string) []string {
	const sep = "==================\nWARNING: DATA RACE"
	var out []string
	for i, r := range strings.Split(stderr, sep) {
		if i == 0 || strings.Contains(r, upstreamRace[0]) && strings.Contains(r, upstreamRace[1]) {
			continue
		}
		out = append(out, sep+r)
	}
	return out
}

// startZklock starts the binary with args and env added to a hermetic
// environment. It is killed and reaped at cleanup if still running.
func startZklock(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	return startWith(t, env, nil, args...)
}

func startWith(t *testing.T, env []string, setup func(*exec.Cmd), args ...string) *proc {
	t.Helper()
	p := &proc{stdout: &iproc.Buffer{}, stderr: &iproc.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(zklockBin, args...)
	// The mark, inherited by zklock's children, finds them at cleanup if a
	// failing test leaves them behind (they run in their own process groups).
	mark := fmt.Sprintf("ZKLOCK_TEST_MARK=%d.%d", os.Getpid(), markSeq.Add(1))
	p.cmd.Env = append(hermeticEnv(env), mark)
	p.cmd.WaitDelay = 5 * time.Second // do not wait forever for a leftover child's output
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if setup != nil {
		setup(p.cmd)
	}
	p.start = time.Now()
	require.NoError(t, p.cmd.Start())
	go func() {
		_ = p.cmd.Wait() // the exit status is read from ProcessState
		p.dur = time.Since(p.start)
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		killMarked(mark)
	})
	return p
}

var markSeq atomic.Int64

// killMarked kills every process whose environment holds mark (Linux: it
// reads /proc; elsewhere it does nothing).
func killMarked(mark string) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte("\x00"+mark+"\x00")) {
			if proc, err := os.FindProcess(pid); err == nil {
				_ = proc.Kill()
			}
		}
	}
}

// wait waits up to d for the process to exit and returns its exit status.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("zklock %v still running after %v\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], d, p.stdout, p.stderr)
	}
	require.Empty(t, ourRaces(p.stderr.String()), "race reports of zklock")
	code := p.cmd.ProcessState.ExitCode()
	require.NotEqual(t, -1, code, "zklock was killed by a signal: %v\nstderr:\n%s", p.cmd.ProcessState, p.stderr)
	return code
}

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitStderr waits until stderr contains s.
func (p *proc) waitStderr(t *testing.T, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), s) || p.exited() },
		20*time.Second, 5*time.Millisecond)
	require.Contains(t, p.stderr.String(), s, "stdout:\n%s", p.stdout)
}

// firstLine waits for the first line on stdout and returns it.
func (p *proc) firstLine(t *testing.T) string {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(p.stdout.String(), "\n") || p.exited() },
		20*time.Second, 5*time.Millisecond)
	line, _, ok := strings.Cut(p.stdout.String(), "\n")
	require.True(t, ok, "no line on stdout; stderr:\n%s", p.stderr)
	return line
}

// runZklock runs the binary to completion (at most 30s) and returns its
// exit status, stdout and stderr.
func runZklock(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	p := startZklock(t, env, args...)
	code := p.wait(t, 30*time.Second)
	return code, p.stdout.String(), p.stderr.String()
}

// TestOurRaces: go-zookeeper's known race is told from any other report.
func TestOurRaces(t *testing.T) {
	report := func(frames ...string) string {
		return "==================\nWARNING: DATA RACE\nWrite at 0x00c0000d0180 by goroutine 30:\n  " +
			strings.Join(frames, "\n  ") + "\n==================\n"
	}
	upstream := report("github.com/go-zookeeper/zk.(*Conn).recvLoop()", "Previous read at 0x00c0000d0180 by goroutine 12:",
		"github.com/go-zookeeper/zk.(*Conn).sendSetWatches()")
	ours := report("main.(*app).runHolding()", "Previous read at 0x00c0000d0180 by goroutine 12:", "main.(*app).release()")
	require.Empty(t, ourRaces("zklock: started\n"+upstream+"zklock: released\n"))
	require.Len(t, ourRaces(upstream+ours), 1)
	require.Contains(t, ourRaces(ours)[0], "runHolding")
}
