package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/proc"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var leading = regexp.MustCompile(`leading with fencing token (\d+)`)

// leadingAt records when the first "leading with fencing token" line of a
// child's output arrives, and keeps the whole output.
type leadingAt struct {
	proc.Buffer
	mu   sync.Mutex
	at   time.Time
	seen chan struct{}
}

func (w *leadingAt) Write(p []byte) (int, error) {
	n, err := w.Buffer.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.at.IsZero() && leading.MatchString(w.Buffer.String()) {
		w.at = time.Now()
		close(w.seen)
	}
	return n, err
}

// sessionTimeout is the program's session timeout, zklock's default.
const sessionTimeout = 10 * time.Second

// The README's first program, run as its users run it: two copies against
// one ZooKeeper (ZKLOCK_SERVERS); one leads, with a fencing token; on
// SIGINT (Ctrl-C) or SIGTERM (systemd, Docker, Kubernetes) it releases and
// exits, and the other leads at once, with a greater token: well within
// half the session timeout, where a leader that died without releasing
// would keep it waiting until its session expired.
func TestIntegration_LeaderOnly(t *testing.T) {
	c := zktest.Start(t)
	bin := filepath.Join(t.TempDir(), "leaderonly")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	type runner struct {
		cmd *exec.Cmd
		out *leadingAt
	}
	start := func(t *testing.T) *runner {
		r := &runner{cmd: exec.Command(bin), out: &leadingAt{seen: make(chan struct{})}}
		r.cmd.Env = append(os.Environ(), "ZKLOCK_SERVERS="+c.ConnectString())
		r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
		require.NoError(t, r.cmd.Start())
		t.Cleanup(func() { _ = r.cmd.Process.Kill(); _ = r.cmd.Wait() })
		return r
	}
	token := func(r *runner) int64 {
		m := leading.FindStringSubmatch(r.out.String())
		if m == nil {
			return 0
		}
		n, err := strconv.ParseInt(m[1], 10, 64)
		require.NoError(t, err)
		return n
	}
	for _, tc := range []struct {
		sig     syscall.Signal
		stopped string // what the program logs as it stops
	}{
		{syscall.SIGINT, "stopped: interrupt signal received"},
		{syscall.SIGTERM, "stopped: terminated signal received"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			a := start(t)
			require.True(t, proc.Wait(a.out.seen, 20*time.Second), "no leader: %s", a.out.String())
			b := start(t)
			require.Never(t, func() bool { return token(b) > 0 }, time.Second, 20*time.Millisecond, "two leaders at once")

			sent := time.Now()
			require.NoError(t, a.cmd.Process.Signal(tc.sig))
			require.True(t, proc.Wait(b.out.seen, 2*sessionTimeout), "no next leader: %s", b.out.String())
			b.out.mu.Lock()
			handover := b.out.at.Sub(sent)
			b.out.mu.Unlock()
			t.Logf("%v to the leader: the other leads %v later", tc.sig, handover.Round(100*time.Microsecond))
			require.NoError(t, a.cmd.Wait(), a.out.String())
			require.Contains(t, a.out.String(), tc.stopped)
			require.Less(t, handover, sessionTimeout/2, "the next leader waited for the session, not the release")
			require.Greater(t, token(b), token(a), "the next leader's token is greater")
			require.NoError(t, b.cmd.Process.Signal(tc.sig))
			require.NoError(t, b.cmd.Wait(), b.out.String())
		})
	}
}
