package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/orphans"
	"github.com/zklock/zklock/internal/proc"
)

// process is one running ZooKeeper JVM, alone in its own process group.
type process struct {
	cmd     *exec.Cmd
	pid     int
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // valid after exited is closed
	out     *logSink
	pidFile string
}

// startProcess starts java with args in its own process group. The child
// gets SIGKILL when the thread that started it exits (Pdeathsig); Go keeps
// its threads for the life of the process unless a goroutine locked to one
// exits, so in practice this is when the test binary dies. The pid file
// covers the rest (see reap.go).
func startProcess(java string, args []string, dir string, out *logSink, clusterDir string) (*process, error) {
	cmd := exec.Command(java, args...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("zktest: start %s: %w", java, err)
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{}), out: out}
	p.pidFile = book.Add(p.pid, clusterDir)
	go func() {
		p.waitErr = cmd.Wait()
		orphans.Remove(p.pidFile)
		close(p.exited)
	}()
	return p, nil
}

// signal sends sig to the whole process group.
func (p *process) signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil // already gone; exited will be closed by the waiter
	}
	return err
}

// waitStopped waits until every thread of the process has stopped after a
// SIGSTOP (see orphans.Stopped), at most d; where /proc cannot tell, it
// returns at once.
func (p *process) waitStopped(i int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		stopped, known := orphans.Stopped(p.pid)
		switch {
		case stopped || !known || p.done():
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("zktest: server %d: not stopped %v after SIGSTOP", i, d)
		}
		time.Sleep(time.Millisecond)
	}
}

func (p *process) done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to exit.
func (p *process) wait(d time.Duration) bool { return proc.Wait(p.exited, d) }

// kill sends SIGKILL to the group and waits until the process is reaped.
func (p *process) kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("zktest: kill pid %d: %w", p.pid, err)
	}
	if !p.wait(30 * time.Second) {
		return fmt.Errorf("zktest: pid %d survived SIGKILL for 30s", p.pid)
	}
	return nil
}

// terminate sends SIGTERM (and SIGCONT, in case it is stopped), waits up to
// grace for a clean exit, then falls back to SIGKILL.
func (p *process) terminate(grace time.Duration) error {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("zktest: SIGTERM pid %d: %w", p.pid, err)
	}
	_ = p.signal(syscall.SIGCONT)
	if p.wait(grace) {
		return nil
	}
	return p.kill()
}

// logSink receives a server's stdout and stderr: it keeps the tail in
// memory for error messages and copies whole lines, prefixed, to an
// optional writer.
type logSink struct {
	tail   *proc.Tail
	mu     sync.Mutex // guards line and the writes to w
	prefix string
	w      io.Writer
	line   []byte
}

const logTail = 16 << 10

func newLogSink(prefix string, w io.Writer) *logSink {
	return &logSink{tail: proc.NewTail(logTail), prefix: prefix, w: w}
}

// Write implements io.Writer; it never fails, so a slow or broken user
// writer cannot block or kill the server.
func (s *logSink) Write(b []byte) (int, error) {
	_, _ = s.tail.Write(b)
	if s.w == nil {
		return len(b), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.line = append(s.line, b...)
	for {
		i := bytes.IndexByte(s.line, '\n')
		if i < 0 {
			break
		}
		_, _ = s.w.Write(append([]byte(s.prefix), s.line[:i+1]...))
		s.line = s.line[i+1:]
	}
	return len(b), nil
}

// Tail returns the last few KiB of output.
func (s *logSink) Tail() string { return s.tail.String() }

// bindClash reports whether the output shows the server could not bind a
// port (another process took it between our reservation and the bind).
func (s *logSink) bindClash() bool {
	t := s.Tail()
	return bytes.Contains([]byte(t), []byte("Address already in use")) ||
		bytes.Contains([]byte(t), []byte("BindException"))
}
