//go:build linux

package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What CMD runs when its zklock is killed: a process in its group (g), one
// that left the group (e: setsid) and one that left the group and lost its
// parent (d: a daemon's double fork), then it loops forever. It records
// "START-NS SH G E D" in $0.
const firstHolderScript = `sleep 1000 & g=$!
setsid sleep 1000 & e=$!
(setsid sleep 1000 & echo $! > "$0.d")
echo "$(date +%s%N) $$ $g $e $(cat "$0.d")" > "$0.tmp" && mv "$0.tmp" "$0"
while :; do sleep 0.05; done`

// What the next holder's CMD runs: it records "START-NS PID alive:" then
// whichever of the first holder's processes ($0) are alive as it starts,
// in $1.
const nextHolderScript = `read -r _ pids < "$0"
alive=
for p in $pids; do
	st=gone
	[ -r /proc/$p/stat ] && read -r _ _ st _ < /proc/$p/stat 2>/dev/null
	case $st in gone|Z|X) ;; *) alive="$alive $p" ;; esac
done
echo "$(date +%s%N) $$ alive:$alive" > "$1.tmp" && mv "$1.tmp" "$1"`

// gone reports whether pid has ended (exited, or a zombie).
func gone(pid int) bool {
	_, _, zombie, ok := procStat(pid)
	return !ok || zombie
}

// kill -9 of zklock (or the OOM killer) ends CMD and everything CMD
// started, in its process group or not, long before the session expires
// and the next waiter's CMD starts: checked by the processes' own pids,
// and by the next CMD, which looks for them as it starts.
func TestIntegration_KillNineEndsCMDBeforeTheNextHolder(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	env = append(env, "ZKLOCK_SESSION_TIMEOUT=1s") // the last setting wins
	for _, verb := range []string{"lock", "elect"} {
		t.Run(verb, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			first, next := filepath.Join(dir, "first"), filepath.Join(dir, "next")
			path := "/death/" + verb
			holder := startZklock(t, env, verb, path, "sh", "-c", firstHolderScript, first)
			rec := strings.Fields(waitFile(t, first))
			require.Len(t, rec, 5, rec)
			started, err := strconv.ParseInt(rec[0], 10, 64)
			require.NoError(t, err)
			pids := make([]int, 4)
			for i, f := range rec[1:] {
				pids[i], err = strconv.Atoi(f)
				require.NoError(t, err)
			}
			shGroup, err := syscall.Getpgid(pids[0])
			require.NoError(t, err)
			for _, pid := range pids[2:] {
				pg, err := syscall.Getpgid(pid)
				require.NoError(t, err)
				require.NotEqual(t, shGroup, pg, "pid %d did not leave CMD's process group", pid)
			}

			waiter := startZklock(t, env, verb, path, "sh", "-c", nextHolderScript, first, next)
			waitChildren(t, conn, path, 2)
			killedAt := time.Now()
			require.NoError(t, holder.cmd.Process.Kill())
			<-holder.done

			// Each would run forever: it ends because zklock died.
			for _, pid := range pids {
				require.Eventually(t, func() bool { return gone(pid) }, 10*time.Second, 5*time.Millisecond,
					"pid %d outlived its zklock", pid)
			}
			assert.Equal(t, exitOK, waiter.wait(t, 20*time.Second), waiter.stderr.String())
			got := strings.Fields(waitFile(t, next))
			require.GreaterOrEqual(t, len(got), 3, got)
			assert.Equal(t, []string{"alive:"}, got[2:], "the next holder's CMD started beside the first's")
			nextStarted, err := strconv.ParseInt(got[0], 10, 64)
			require.NoError(t, err)
			assert.Less(t, started, killedAt.UnixNano())
			assert.Greater(t, nextStarted, killedAt.UnixNano(), "the next CMD started before the kill")
			assert.Empty(t, children(t, conn, path), "node left behind")
		})
	}
}
