//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIntegration_ScheduleEveryTickOnce: two `elect --every 1s` processes
// on one path run CMD once per tick between them, with the tick and the
// leader's token in the environment; each exit status is in the tick's
// claim, and status shows the runs and the next tick. SIGTERM ends both.
func TestIntegration_ScheduleEveryTickOnce(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	out := filepath.Join(t.TempDir(), "ticks")
	// Odd seconds exit 3, even ones 0.
	script := `echo "$ZKLOCK_TICK_MS $ZKLOCK_FENCING_TOKEN $ZKLOCK_TICK $1" >> "$0"; exit $(( ($ZKLOCK_TICK_MS / 1000) % 2 * 3 ))`
	a := startZklock(t, env, "elect", "--every", "1s", "--id", "a", "sched", "--", "sh", "-c", script, out, "a")
	b := startZklock(t, env, "elect", "--every", "1s", "--id", "b", "sched", "--", "sh", "-c", script, out, "b")
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(out)
		return strings.Count(string(data), "\n") >= 4
	}, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	codeA, codeB := a.wait(t, 20*time.Second), b.wait(t, 20*time.Second)
	assert.Contains(t, []int{0, 3}, codeA, a.stderr.String())
	assert.Contains(t, []int{0, 3}, codeB, b.stderr.String())

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		require.Len(t, f, 4, line)
		require.False(t, seen[f[0]], "tick %s ran twice", f[0])
		seen[f[0]] = true
		ms, err := strconv.ParseInt(f[0], 10, 64)
		require.NoError(t, err)
		require.Zero(t, ms%1000, "ticks are aligned to the second")
		require.Equal(t, time.UnixMilli(ms).UTC().Format(time.RFC3339Nano), f[2])
		// The claim records the run's token and exit status.
		claim, _, err := conn.Get("/locks/sched/ticks/" + f[0])
		require.NoError(t, err)
		var rec struct {
			ID       string `json:"id"`
			Token    int64  `json:"token"`
			Outcome  string `json:"outcome"`
			ExitCode *int   `json:"exit_code"`
		}
		require.NoError(t, json.Unmarshal(claim, &rec), string(claim))
		assert.Equal(t, f[1], strconv.FormatInt(rec.Token, 10))
		assert.Equal(t, f[3], rec.ID)
		if ms/1000%2 == 1 {
			assert.Equal(t, "failed", rec.Outcome)
			require.NotNil(t, rec.ExitCode)
			assert.Equal(t, 3, *rec.ExitCode)
		} else if rec.Outcome != "" { // the last one may have been cut short by SIGTERM
			assert.Equal(t, "ok", rec.Outcome, string(claim))
		}
	}

	code, stdout, stderr := runZklock(t, env, "status", "sched", "--json")
	require.Equal(t, exitOK, code, stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &st))
	require.NotNil(t, st.Schedule, stdout)
	assert.Equal(t, "1s", st.Schedule.Every)
	assert.Len(t, st.Schedule.Runs, len(seen))
	assert.NotEmpty(t, st.Schedule.Next)
	code, stdout, stderr = runZklock(t, env, "status", "sched")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "schedule: every 1s, next tick ")
	assert.Contains(t, stdout, "TICK")
}

func TestScheduleFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"elect", "--every", "1s", "sched"}, // no CMD
		{"elect", "--every", "1s", "--latch", "sched", "true"},
		{"elect", "--every", "10ms", "sched", "true"},
		{"elect", "--every", "1s", "--offset", "1s", "sched", "true"},
		{"elect", "--every", "1s", "--missed", "all", "sched", "true"},
		{"elect", "--offset", "1s", "sched", "true"}, // --offset without --every
		{"elect", "--every", "1s", "--history", "0", "sched", "true"},
	} {
		code, _, stderr := runZklock(t, []string{"ZKLOCK_SERVERS=127.0.0.1:1"}, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, stderr)
	}
}
