package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/orphans"
	"github.com/zklock/zklock/internal/proc"
)

// A Server is a running PostgreSQL server, or the existing one PG_DSN
// names. Its superuser is postgres, with trust authentication on
// 127.0.0.1 only.
type Server struct {
	dsn      string
	external bool
	dir      string // the server's directory: data/, the socket, the log
	cmd      *exec.Cmd
	exited   chan struct{}
	log      *proc.Tail
	pidFile  string

	closeOnce sync.Once
	closeErr  error
}

// An Option configures a server started by Launch, Start or Shared.
type Option func(*config)

type config struct {
	settings [][2]string
}

// WithSetting sets a server parameter (postgres -c name=value), such as
// max_connections (default 100) or synchronous_commit. Default: the
// package's few settings (shared_buffers=16MB, listen_addresses=127.0.0.1,
// the socket in the server's directory) over PostgreSQL's defaults.
func WithSetting(name, value string) Option {
	return func(c *config) { c.settings = append(c.settings, [2]string{name, value}) }
}

// startTimeout bounds initdb plus the server's start.
const startTimeout = 60 * time.Second

// Launch starts a server, or returns PG_DSN's when that is set. The caller
// must Close it. ctx bounds the start only.
func Launch(ctx context.Context, opts ...Option) (*Server, error) {
	if dsn := os.Getenv("PG_DSN"); dsn != "" {
		return &Server{dsn: dsn, external: true}, nil
	}
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	for _, s := range c.settings {
		if s[0] == "" || strings.ContainsAny(s[0], "= \x00") || strings.ContainsRune(s[1], 0) {
			return nil, fmt.Errorf("pgtest: bad setting %q=%q", s[0], s[1])
		}
	}
	book.Reap()
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := makeDir(cred)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	s, err := start(ctx, bin, dir, cred, c)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func start(ctx context.Context, bin, dir string, cred *syscall.Credential, c config) (*Server, error) {
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.Dir = dir
	initdb.Env = childEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	var lastErr error
	for range 3 { // another process may take the free port before postgres binds it
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s, err := startServer(ctx, bin, dir, port, cred, c)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, errBind) {
			break
		}
	}
	return nil, lastErr
}

var errBind = errors.New("pgtest: could not bind the port")

func startServer(ctx context.Context, bin, dir string, port int, cred *syscall.Credential, c config) (*Server, error) {
	args := []string{"-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir,
		"-c", "shared_buffers=16MB", "-c", "logging_collector=off"}
	for _, s := range c.settings {
		args = append(args, "-c", s[0]+"="+s[1])
	}
	log := proc.NewTail(tailSize)
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Dir = dir
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group, to kill its children with it; SIGKILL when
	// the thread that started it exits, which in practice is when the test
	// binary dies (the pid file covers the rest: reap.go).
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s := &Server{
		dsn:     fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		dir:     dir,
		cmd:     cmd,
		exited:  make(chan struct{}),
		log:     log,
		pidFile: book.Add(cmd.Process.Pid, dir),
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if err := s.awaitReady(ctx, port); err != nil {
		s.stop()
		if strings.Contains(log.String(), "could not bind") || strings.Contains(log.String(), "could not create any TCP/IP sockets") {
			return nil, fmt.Errorf("%w %d: %w", errBind, port, err)
		}
		return nil, err
	}
	return s, nil
}

// awaitReady waits until postmaster.pid says the server accepts
// connections (its status line, PostgreSQL 10 and later) and the port
// answers.
func (s *Server) awaitReady(ctx context.Context, port int) error {
	pidFile := filepath.Join(s.dir, "data", "postmaster.pid")
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(pidFile); err == nil {
			lines := strings.Split(string(b), "\n")
			if len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
				if err == nil {
					conn.Close()
					return nil
				}
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited during its start:\n%s", s.log.String())
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w:\n%s", ctx.Err(), s.log.String())
		case <-tick.C:
		}
	}
}

// DSN returns the URL of the server's postgres database, as the superuser
// postgres, for github.com/jackc/pgx/v5/stdlib (driver name "pgx") or any
// libpq-style client.
func (s *Server) DSN() string { return s.dsn }

// External reports whether the server is PG_DSN's, not one this package
// started.
func (s *Server) External() bool { return s.external }

// Pid returns the postmaster's pid, or 0 for an external server.
func (s *Server) Pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Close stops the server (fast shutdown: SIGINT, then SIGQUIT after 10 s,
// then SIGKILL to its process group) and removes its directory. It does
// nothing to an external server. Closing twice returns the first result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.external {
			return
		}
		s.closeErr = s.stop()
	})
	return s.closeErr
}

func (s *Server) stop() error {
	pid := s.cmd.Process.Pid
	var err error
	for _, step := range []struct {
		sig   syscall.Signal
		group bool
		wait  time.Duration
	}{{syscall.SIGINT, false, 10 * time.Second}, {syscall.SIGQUIT, false, 5 * time.Second}, {syscall.SIGKILL, true, 30 * time.Second}} {
		target := pid
		if step.group {
			target = -pid
		}
		_ = syscall.Kill(target, step.sig)
		if s.waitExit(step.wait) {
			err = nil
			break
		}
		err = fmt.Errorf("pgtest: postgres pid %d survived %v", pid, step.sig)
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // any child the postmaster left
	orphans.Remove(s.pidFile)
	if rerr := os.RemoveAll(s.dir); rerr != nil && err == nil {
		err = fmt.Errorf("pgtest: remove %s: %w", s.dir, rerr)
	}
	return err
}

func (s *Server) waitExit(d time.Duration) bool { return proc.Wait(s.exited, d) }

// binDir finds the directory of initdb and postgres: PGTEST_BINDIR, or the
// newest /usr/lib/postgresql/<version>/bin.
func binDir() (string, error) {
	if d := os.Getenv("PGTEST_BINDIR"); d != "" {
		return d, nil
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	for _, m := range matches {
		if _, err := os.Stat(filepath.Join(filepath.Dir(m), "initdb")); err == nil {
			return filepath.Dir(m), nil
		}
	}
	return "", errors.New("pgtest: no PostgreSQL server in /usr/lib/postgresql/*/bin: " +
		"run scripts/install-deps.sh (Debian's postgresql), set PGTEST_BINDIR, or point PG_DSN at a server")
}

// version returns the major version in /usr/lib/postgresql/<v>/bin/postgres.
func version(path string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(path))), 64)
	return v
}

func childEnv() []string {
	return []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "LANG=C", "TZ=UTC"}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tailSize is how much of the server's output its errors quote.
const tailSize = 16 << 10
