package zktest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/orphans"
)

// TestReapOrphans starts a stand-in "server" whose pid file names an owner
// that has exited, and checks that book.Reap kills it and removes the
// file, while a server with a live owner is left alone.
func TestReapOrphans(t *testing.T) {
	dir := t.TempDir()
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	deadOwner := dead.ProcessState.Pid()

	start := func(marker string) *process {
		// sh's $0 carries the marker, as the JVM's -Dzktest.dir does.
		cmd := exec.Command("sh", "-c", "sleep 60; :", "-Dzktest.dir="+marker)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		require.NoError(t, cmd.Start())
		p := &process{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
		go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
		t.Cleanup(func() { _ = p.kill() })
		return p
	}
	orphan := start(filepath.Join(dir, "orphan"))
	owned := start(filepath.Join(dir, "owned"))

	orphanFile := filepath.Join(book.Dir, strconv.Itoa(orphan.pid))
	require.NoError(t, os.MkdirAll(book.Dir, 0o777))
	require.NoError(t, os.WriteFile(orphanFile,
		[]byte(fmt.Sprintf("owner %d 1\ndir %s\n", deadOwner, filepath.Join(dir, "orphan"))), 0o666))
	ownedFile := book.Add(owned.pid, filepath.Join(dir, "owned"))
	require.NotEmpty(t, ownedFile)
	t.Cleanup(func() { orphans.Remove(ownedFile) })

	killed := book.Reap()
	require.Contains(t, killed, orphan.pid)
	require.NotContains(t, killed, owned.pid)
	require.True(t, orphan.wait(10*time.Second), "orphan still running")
	require.False(t, owned.done(), "server with a live owner was killed")
	require.NoFileExists(t, orphanFile)
	require.FileExists(t, ownedFile)
}

func TestFindJavaMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("JAVA_HOME", "")
	t.Setenv(envClasspath, "/x.jar")
	_, err := findJava("", "")
	require.ErrorIs(t, err, ErrNoServer)
	require.True(t, strings.Contains(err.Error(), "sudo apt install default-jre-headless"), err.Error())
	require.False(t, strings.Contains(err.Error(), "make"), err.Error())
}

func TestLimits(t *testing.T) {
	for _, tc := range []struct {
		tick       int // ms
		init, sync int
	}{{100, 100, 20}, {500, 20, 5}, {2000, 10, 5}, {1, 10000, 2000}} {
		i, s := limits(time.Duration(tc.tick) * time.Millisecond)
		require.Equal(t, [2]int{tc.init, tc.sync}, [2]int{i, s}, "tick %dms", tc.tick)
	}
}
