//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

// cost is what one zklock run took: wall time and peak RSS.
type cost struct {
	took time.Duration
	rss  int64 // bytes
}

func (c cost) String() string {
	return fmt.Sprintf("%v, peak RSS %.1f MiB", c.took.Round(time.Millisecond), float64(c.rss)/(1<<20))
}

// measured runs zklock to completion (at most 30s) and returns its exit
// status, stdout, stderr and cost.
func measured(t *testing.T, env []string, args ...string) (int, string, string, cost) {
	t.Helper()
	p := startZklock(t, env, args...)
	code := p.wait(t, 30*time.Second)
	ru, _ := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	require.NotNil(t, ru)
	return code, p.stdout.String(), p.stderr.String(), cost{p.dur, ru.Maxrss << 10} // Linux: KiB
}

// A lock directory of 100,000 children of 24 bytes (not contenders), with
// a holder and a waiter that are zklock processes: ls shows the lock, its
// holder and its one waiter, counts the other children and leaves nothing
// out; status shows the holder; when the holder exits, the waiter, a
// zklock lock started while it held, acquires and runs its command. The
// cost of acquiring, of ls and of status is logged.
func TestIntegration_HundredThousandChildrenLsStatusAndWait(t *testing.T) {
	_, conn, env := zkSetup(t)
	const dir = "/locks/big"
	start := time.Now()
	plant(t, conn, dir, 100_000, func(i int) string { return fmt.Sprintf("entry-%018x", i) })
	t.Logf("made 100,000 children in %v", time.Since(start))

	holderProc, node, token := holder(t, env, dir)
	acquire := cost{time.Since(holderProc.start), peakRSS(t, holderProc.cmd.Process.Pid)}
	marker := filepath.Join(t.TempDir(), "ran")
	waiter := startZklock(t, env, "--timeout", "50s", "lock", dir, "--", "sh", "-c", "touch "+marker)
	waitChildren(t, conn, dir, 100_002)

	code, stdout, stderr, ls := measured(t, env, "--timeout", "30s", "ls", "--json")
	require.Equal(t, exitOK, code, stderr)
	var o lockview.Overview
	require.NoError(t, json.Unmarshal([]byte(stdout), &o))
	require.Len(t, o.Locks, 1, "%+v", o)
	l := o.Locks[0]
	require.Equal(t, dir, l.Path)
	require.Len(t, l.Holders, 1)
	require.Equal(t, node, l.Holders[0].Path)
	require.Equal(t, token, l.Token)
	require.Equal(t, 1, l.Waiting)
	require.Equal(t, 100_000, l.Others)
	require.Zero(t, o.NotShown, "the other children of a lock directory are not walked: %s", o.Problem)
	require.Empty(t, o.Problem)

	code, stdout, stderr = runZklock(t, env, "--timeout", "30s", "ls")
	require.Equal(t, exitOK, code, stderr)
	require.True(t, strings.HasPrefix(stdout, "/locks: 1 lock(s), 1 held, 1 waiting\n"), stdout)
	require.NotContains(t, stdout, "note:")

	code, stdout, stderr, status := measured(t, env, "status", dir)
	require.Equal(t, exitOK, code, stderr)
	require.True(t, strings.HasPrefix(stdout, dir+": 2 participant(s)\n"), stdout)
	require.Regexp(t, fmt.Sprintf(`(?m)^%s\s+lock\s+\d+\s+%d\s.*\syes\s`, regexp.QuoteMeta(node[len(dir)+1:]), token), stdout)

	require.NoFileExists(t, marker, "the waiter waits")
	released := time.Now()
	require.NoError(t, holderProc.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, exitOK, holderProc.wait(t, 20*time.Second))
	require.Equal(t, exitOK, waiter.wait(t, 30*time.Second), waiter.stderr.String())
	handover := time.Since(released)
	require.FileExists(t, marker, "the waiter ran its command, holding the lock")

	code, _, stderr, again := measured(t, env, "--timeout", "20s", "lock", dir, "--", "true")
	require.Equal(t, exitOK, code, stderr)
	t.Logf("100,000 children (race detector: %v): acquire (holder, to its first line) %s; ls %s; status %s; handover to the waiter %v; lock -- true %s",
		raceEnabled, acquire, ls, status, handover.Round(time.Millisecond), again)
}

// fillDirs creates /locks/d000000 to /locks/d(n-1) in multi batches of
// 1,000, every 100th with a holder's node (ephemeral, owned by conn).
func fillDirs(t *testing.T, conn *zk.Conn, n int) {
	t.Helper()
	acl := zk.WorldACL(zk.PermAll)
	_, err := conn.Create("/locks", nil, 0, acl)
	require.NoError(t, err)
	var ops []any
	for i := range n {
		ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/locks/d%06d", i), Acl: acl})
		if i%100 == 0 {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/locks/d%06d/_c_00000000-0000-4000-8000-000000000000-lock-", i),
				Data: []byte("holder"), Acl: acl, Flags: zk.FlagEphemeral | zk.FlagSequence})
		}
		if len(ops) >= 1000 || i == n-1 {
			_, err := conn.Multi(ops...)
			require.NoError(t, err)
			ops = ops[:0]
		}
	}
}

// A root of 100,000 lock directories: ls and the UI's JSON show the first
// --max-dirs (2,000 by default) by name and say how many more were found
// and not shown, within a bounded time and memory (logged).
func TestIntegration_ManyLockDirectoriesLsAndUI(t *testing.T) {
	_, conn, env := zkSetup(t)
	start := time.Now()
	fillDirs(t, conn, 100_000)
	t.Logf("made 100,000 directories in %v", time.Since(start))

	code, stdout, stderr, ls := measured(t, env, "--timeout", "30s", "ls")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(stdout, "\n")
	require.Equal(t, "/locks: 20 lock(s), 20 held, 0 waiting; 98,000 more directories not shown", lines[0])
	require.Contains(t, stdout, "note: 98,000 more directories under /locks not shown: at most 2,000 are watched (zklock --max-dirs)")
	require.Regexp(t, `(?m)^/locks/d000000\s+mutex\s+holder\s`, stdout)
	require.Regexp(t, `(?m)^/locks/d001900\s+mutex\s+holder\s`, stdout)
	require.NotContains(t, stdout, "/locks/d002000")

	code, stdout, stderr, ls500 := measured(t, env, "--timeout", "30s", "ls", "--max-dirs", "500", "--json")
	require.Equal(t, exitOK, code, stderr)
	var o lockview.Overview
	require.NoError(t, json.Unmarshal([]byte(stdout), &o))
	require.Len(t, o.Locks, 5)
	require.Equal(t, 99_500, o.NotShown)

	code, _, stderr = runZklock(t, env, "ls", "--max-dirs", "0")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "invalid --max-dirs 0")

	ui, url := startUI(t, env, "--max-dirs", "1000")
	require.Eventually(t, func() bool { return len(getOverview(t, url+"/api/locks").Locks) == 10 }, 30*time.Second, 100*time.Millisecond)
	o = getOverview(t, url+"/api/locks")
	require.Equal(t, 99_000, o.NotShown)
	require.Contains(t, o.Problem, "99,000 more directories under /locks not shown")
	uiRSS := peakRSS(t, ui.cmd.Process.Pid)
	t.Logf("100,000 directories (race detector: %v): ls %s; ls --max-dirs 500 %s; ui --max-dirs 1000 peak RSS %.1f MiB", raceEnabled, ls, ls500,
		float64(uiRSS)/(1<<20))
}
