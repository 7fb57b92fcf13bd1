package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScheduleStatusTable: the schedule's section of status: the period,
// next tick and leader, the runs with exit codes and notes, the missed
// ticks; an id with control characters is quoted.
func TestScheduleStatusTable(t *testing.T) {
	three := 3
	st := &scheduleJSON{Every: "5m0s", Offset: "30s", Next: "2026-12-05T10:05:30.000Z", Leader: "host-a", LeaderToken: 42,
		Runs: []tickJSON{
			{Tick: "2026-12-05T09:55:30.000Z", Outcome: "ok", ID: "host-a", Token: 40, Start: "2026-12-05T09:55:30.001Z", End: "2026-12-05T09:55:31.501Z"},
			{Tick: "2026-12-05T10:00:30.000Z", Outcome: "failed", ExitCode: &three, ID: "host\x1b[31m", Token: 42,
				Start: "2026-12-05T10:01:10.000Z", End: "2026-12-05T10:01:11.000Z", LateMs: 40000, Missed: 2},
		},
		MissedTotal: 2, Missed: []string{"2026-12-05T09:45:30.000Z", "2026-12-05T09:50:30.000Z"}, Overdue: 0}
	var b strings.Builder
	require.NoError(t, writeScheduleTable(&b, st))
	out := b.String()
	require.Contains(t, out, "schedule: every 5m0s (offset 30s), next tick 2026-12-05T10:05:30.000Z; leader host-a (token 42); 2 run(s) kept\n")
	require.Regexp(t, `2026-12-05T09:55:30.000Z\s+ok\s+0\s+host-a\s+40\s+\S+\s+1.5s`, out)
	require.Regexp(t, `2026-12-05T10:00:30.000Z\s+failed\s+3\s+"host\\x1b\[31m"\s+42\s+\S+\s+1s\s+late 40s missed 2 before`, out)
	require.Contains(t, out, "missed: 2 tick(s) between runs (latest 2026-12-05T09:50:30.000Z); overdue: 0\n")
	require.NotContains(t, out, "\x1b")

	b.Reset()
	require.NoError(t, writeScheduleTable(&b, &scheduleJSON{Runs: []tickJSON{}}))
	require.Equal(t, "schedule: unknown period; no leader; 0 run(s) kept\n", b.String())
	b.Reset()
	require.NoError(t, writeScheduleTable(&b, nil))
	require.Empty(t, b.String())
}
