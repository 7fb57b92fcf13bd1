package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// The README's first program, run as its users run it: two copies against
// one ZooKeeper (ZKLOCK_SERVERS); one leads, with a fencing token; on
// SIGINT it stops and the other leads, with a greater token.
func TestIntegration_LeaderOnly(t *testing.T) {
	c := zktest.Start(t)
	bin := filepath.Join(t.TempDir(), "leaderonly")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)

	type runner struct {
		cmd *exec.Cmd
		out *proc.Buffer
	}
	start := func() *runner {
		r := &runner{cmd: exec.Command(bin), out: &proc.Buffer{}}
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
	a := start()
	require.Eventually(t, func() bool { return token(a) > 0 }, 20*time.Second, 10*time.Millisecond, a.out.String())
	b := start()
	require.Never(t, func() bool { return token(b) > 0 }, time.Second, 20*time.Millisecond, "two leaders at once")

	require.NoError(t, a.cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, a.cmd.Wait(), a.out.String())
	require.Contains(t, a.out.String(), "stopped: interrupt signal received")
	require.Eventually(t, func() bool { return token(b) > 0 }, 20*time.Second, 10*time.Millisecond, b.out.String())
	require.Greater(t, token(b), token(a), "the next leader's token is greater")
}
