package orphans

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAlive(t *testing.T) {
	self := os.Getpid()
	start := ProcStart(self)
	require.NotEmpty(t, start)
	require.True(t, Alive(self, start))
	require.False(t, Alive(self, ""), "no start time names no process")
	require.False(t, Alive(self, start+"0"), "another start time is another process")
	require.False(t, Alive(0, start))
}

// TestScan finds a child by a marker on its command line while it runs,
// and no longer once it has been killed.
func TestScan(t *testing.T) {
	marker := []byte("orphans-scan-" + strconv.Itoa(os.Getpid()) + "\x00")
	match := func(cmdline []byte) bool { return bytes.Contains(cmdline, marker) }
	// read is a builtin: sh forks no child that would carry the marker too.
	cmd := exec.Command("sh", "-c", "read -r _", string(marker[:len(marker)-1]))
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.Equal(t, []int{cmd.Process.Pid}, Scan(match))
	require.NoError(t, cmd.Process.Kill())
	require.Eventually(t, func() bool { return len(Scan(match)) == 0 }, 10*time.Second, 10*time.Millisecond,
		"a killed process (a zombie until waited for) is still listed")
}

// TestStopped tells a SIGSTOPped child from a running one.
func TestStopped(t *testing.T) {
	cmd := exec.Command("sh", "-c", "read -r _")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	stopped, known := Stopped(pid)
	require.True(t, known)
	require.False(t, stopped)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	require.Eventually(t, func() bool { s, _ := Stopped(pid); return s }, 10*time.Second, time.Millisecond)
	require.NoError(t, syscall.Kill(pid, syscall.SIGCONT))
	require.Eventually(t, func() bool { s, _ := Stopped(pid); return !s }, 10*time.Second, time.Millisecond)
	_, known = Stopped(0)
	require.False(t, known, "no such process")
}
