package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/internal/pgtest"
)

// TestMain runs the tests with one PostgreSQL server for them all (for the
// demo with DEMO_DSN), then checks that no goroutine is left.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestIntegration_Demo runs `make demo`'s script end to end (real ZooKeeper,
// real processes, SIGKILL and SIGSTOP, results written through package
// fence), once as `make demo` does (a SQLite file) and once with DEMO_DSN
// on the PostgreSQL pgtest starts, and checks what it shows: fencing tokens
// increase from leader to leader, the paused leader's stale write is
// refused by the database with both tokens and is not in it, every
// committed write is, the demo ends by itself within a minute, and no
// process it started is left (nor, on PostgreSQL, any of the run's rows).
func TestIntegration_Demo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs scripts/demo.sh (about 10s each)")
	}
	t.Run("sqlite", func(t *testing.T) { runDemo(t, "") })
	t.Run("postgres", func(t *testing.T) {
		dsn := pgtest.Shared(t).NewDatabase(t)
		runDemo(t, dsn)
		db, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		defer db.Close()
		for _, table := range []string{"jobrunner_results", "zklock_fence"} {
			var n int
			require.NoError(t, db.QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
			require.Zero(t, n, "the demo left rows in %s", table)
		}
	})
}

func runDemo(t *testing.T, dsn string) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	tmp := t.TempDir() // the demo's work dir goes under it: our mark for leftovers
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "demo.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "DEMO_DSN="+dsn)
	cmd.WaitDelay = 5 * time.Second
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	require.NoError(t, err, "demo failed\nstdout:\n%s\nstderr:\n%s", out.String(), stderr.String())
	require.Less(t, took, time.Minute, "the demo must end by itself within a minute")
	text := out.String()

	// Leaders in order, with their tokens: increasing, three different runners.
	leaders := regexp.MustCompile(`(?m)^\[(runner-\d)\] LEADER token=(\d+) `).FindAllStringSubmatch(text, -1)
	require.GreaterOrEqual(t, len(leaders), 3, text)
	ids := map[string]bool{}
	last := int64(-1)
	for _, l := range leaders {
		tok, err := strconv.ParseInt(l[2], 10, 64)
		require.NoError(t, err)
		require.Greater(t, tok, last, "tokens must increase across leaders:\n%s", text)
		last = tok
		ids[l[1]] = true
	}
	require.Len(t, ids, 3, "three runners led in turn:\n%s", text)

	// The stale write: the second leader (the paused one) writes with its old
	// token after the third leader's; the database refuses it.
	paused, stale, current := leaders[1][1], leaders[1][2], leaders[2][2]
	refused := regexp.MustCompile(`(?m)^\[` + paused + `\] write token=` + stale + ` value="([^"]+)" REFUSED by the database: ` +
		`fence: resource "(/demo/jobrunner[^"]*)": stale token ` + stale + `: token ` + current + ` already accepted$`).FindStringSubmatch(text)
	require.NotNil(t, refused, "no refused stale write with tokens %s and %s:\n%s", stale, current, text)

	// The database's rows (the demo's report): ordered by token, every
	// committed write and no refused one.
	rows := map[string]bool{}
	high := int64(-1)
	for _, m := range regexp.MustCompile(`(?m)^\[db\] row writer=\S+ token=(\d+) value="([^"]+)"$`).FindAllStringSubmatch(text, -1) {
		tok, _ := strconv.ParseInt(m[1], 10, 64)
		require.GreaterOrEqual(t, tok, high)
		high = tok
		rows[m[2]] = true
	}
	require.NotContains(t, rows, refused[1], "the refused write is in the database")
	resource := refused[2]
	if dsn == "" {
		require.Equal(t, "/demo/jobrunner", resource)
	}
	committed := regexp.MustCompile(`(?m)^\[runner-\d\] write token=\d+ value="([^"]+)" committed$`).FindAllStringSubmatch(text, -1)
	require.NotEmpty(t, committed)
	for _, m := range committed {
		require.Contains(t, rows, m[1], "a committed write is not in the database")
	}
	require.Regexp(t, `(?m)^\[db\] zklock_fence resource=`+regexp.QuoteMeta(resource)+` token=`+strconv.FormatInt(high, 10)+`$`, text)
	require.Contains(t, text, "DEMO OK")
	t.Logf("demo took %v; summary:\n%s", took, text[bytes.LastIndex(out.Bytes(), []byte("== summary")):])

	// Nothing left behind: no process mentions the demo's directory.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(tmp)) {
			t.Errorf("left behind: %s %q", p, bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
		}
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Empty(t, entries, "the demo's work dir was not removed")
}
