//go:build unix

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of the binary that need no ZooKeeper.

// deadAddr returns an address on which nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// silentAddr returns an address that accepts connections and never
// answers, as a hung server or a partition would look.
func silentAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

func TestCLIHelp(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runZklock(t, nil, "-h")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "Usage:")
	assert.Contains(t, stdout, "Exit status:")
	assert.Empty(t, stderr)
}

func TestCLIUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	env := []string{"ZKLOCK_SERVERS=" + deadAddr(t)}
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing verb"},
		{[]string{"frobnicate"}, `unknown verb "frobnicate"`},
		{[]string{"lock"}, "missing PATH"},
		{[]string{"lock", "a//b", "true"}, "invalid PATH"},
		{[]string{"lock", "/", "true"}, "invalid PATH"},
		{[]string{"status", ""}, "empty PATH"},
		{[]string{"--bogus", "lock", "p"}, "flag provided but not defined: -bogus"},
		{[]string{"--timeout", "soon", "lock", "p"}, `invalid --timeout "soon"`},
		{[]string{"--on-unreachable", "pray", "lock", "p"}, "--on-unreachable"},
		{[]string{"read"}, "missing PATH"},
		{[]string{"write", "a//b", "true"}, "invalid PATH"},
		{[]string{"semaphore", "p", "true"}, "--leases N is required"},
		{[]string{"semaphore", "p", "--leases", "0", "true"}, "--leases N is required"},
		{[]string{"revoke"}, "missing PATH"},
		{[]string{"revoke", "/locks/p/n", "extra"}, `unexpected argument "extra"`},
		{[]string{"--namespace", "/app", "lock", "p", "true"}, `invalid --namespace "/app"`},
		{[]string{"status", "p", "--namespace", "a//b"}, `invalid --namespace "a//b"`},
		{[]string{"elect", "--listen", "p", "true"}, `unexpected CMD "true"`},
		{[]string{"elect", "--listen", "p", "--id", "x"}, "elect --listen takes no --id"},
		{[]string{"elect", "--listen", "--requeue", "p"}, "elect --listen takes no"},
		{[]string{"--try", "elect", "--listen", "p"}, "elect --listen takes no"},
		{[]string{"elect", "p", "--json"}, "--json goes with --observe"},
		{[]string{"elect", "--latch", "--try", "p", "true"}, "--try is not available with --latch"},
		{[]string{"elect", "--latch", "--revocable", "p", "true"}, "--revocable is not available with --latch"},
		{[]string{"--listen", "lock", "p"}, "--listen is not a flag of lock"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runZklock(t, env, tt.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tt.args, stderr)
		assert.Contains(t, stderr, tt.want, tt.args)
		assert.Contains(t, stderr, "zklock -h")
		assert.Empty(t, stdout)
	}
	code, _, stderr := runZklock(t, append(env, "ZKLOCK_SESSION_TIMEOUT=-3s"), "lock", "p")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "ZKLOCK_SESSION_TIMEOUT")
}

func TestCLICommandNotFoundExits127(t *testing.T) {
	t.Parallel()
	// The command is looked up before connecting: no server is needed.
	code, _, stderr := runZklock(t, []string{"ZKLOCK_SERVERS=" + deadAddr(t)}, "lock", "p", "zklock-no-such-command")
	assert.Equal(t, exitNotFound, code)
	assert.Contains(t, stderr, "zklock-no-such-command")
	code, _, _ = runZklock(t, []string{"ZKLOCK_SERVERS=" + deadAddr(t)}, "lock", "p", t.TempDir())
	assert.Equal(t, exitCannotExec, code)
}

func TestCLIUnreachable(t *testing.T) {
	t.Parallel()
	for name, addr := range map[string]string{"refused": deadAddr(t), "silent": silentAddr(t)} {
		for _, policy := range []string{"fail", "run"} {
			t.Run(name+"/"+policy, func(t *testing.T) {
				t.Parallel()
				marker := filepath.Join(t.TempDir(), "ran")
				p := startZklock(t, []string{"ZKLOCK_ON_UNREACHABLE=" + policy},
					"--servers", addr, "--timeout", "1s", "--auth", "digest:u:p",
					"lock", "unreachable", "sh", "-c", `env > "$0"; exit 7`, marker)
				code := p.wait(t, 15*time.Second)
				assert.GreaterOrEqual(t, p.dur, time.Second)
				assert.Less(t, p.dur, 6*time.Second)
				assert.Contains(t, p.stderr.String(), "no ZooKeeper server answered at "+addr+" within 1s")
				if policy == "fail" {
					assert.Equal(t, exitError, code, p.stderr.String())
					assert.NoFileExists(t, marker, "CMD ran")
					return
				}
				// run: CMD runs unlocked, its status is zklock's, and its
				// environment says so, with no node and no token.
				assert.Equal(t, 7, code, p.stderr.String())
				assert.Contains(t, p.stderr.String(), "WITHOUT the lock")
				env, err := os.ReadFile(marker)
				require.NoError(t, err, "CMD did not run")
				assert.Contains(t, string(env), "ZKLOCK_UNLOCKED=1\n")
				assert.Contains(t, string(env), "ZKLOCK_PATH=/locks/unreachable\n")
				assert.NotContains(t, string(env), "ZKLOCK_FENCING_TOKEN=")
				assert.NotContains(t, string(env), "ZKLOCK_NODE=")
			})
		}
	}
	t.Run("status", func(t *testing.T) {
		t.Parallel()
		code, stdout, stderr := runZklock(t, nil, "--servers", silentAddr(t), "--timeout", "700ms", "status", "p", "--json")
		assert.Equal(t, exitError, code)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "no ZooKeeper server answered")
	})
}

// --on-unreachable run: once the connect bound has expired and CMD runs
// unlocked, the first signal goes to CMD (it used to be taken by the wait
// that had just ended, and CMD ran to its end); zklock exits with CMD's
// status, 128+S.
func TestCLIOnUnreachableRunForwardsSignals(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(signalName(sig), func(t *testing.T) {
			t.Parallel()
			ready := filepath.Join(t.TempDir(), "ready")
			p := startZklock(t, nil, "--servers", deadAddr(t), "--timeout", "1s", "--on-unreachable", "run",
				"lock", "unreachable-signal", "sh", "-c", `echo ready > "$0"; while :; do sleep 0.05; done`, ready)
			waitFile(t, ready)
			require.NoError(t, p.cmd.Process.Signal(sig))
			assert.Equal(t, 128+int(sig), p.wait(t, 15*time.Second), p.stderr.String())
			assert.Contains(t, p.stderr.String(), "WITHOUT the lock")
		})
	}
}

func TestCLISignalWhileConnectingExits3(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	// --timeout 0: connecting is bounded by 10s; the signal ends it sooner.
	p := startZklock(t, nil, "-v", "--servers", silentAddr(t), "lock", "p", "sh", "-c", `touch "$0"`, marker)
	p.waitStderr(t, "zklock: connecting")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGINT))
	code := p.wait(t, 15*time.Second)
	assert.Equal(t, exitNotAcquired, code, p.stderr.String())
	assert.Less(t, p.dur, 8*time.Second)
	assert.Contains(t, p.stderr.String(), "not acquired: interrupted by SIGINT")
	assert.NoFileExists(t, marker)
	assert.False(t, strings.Contains(p.stderr.String(), "panic"))
}

func TestMain_isTerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "/dev/null is not a terminal")
	assert.False(t, isTerminal(strings.NewReader("")))
}
