package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/internal/pgtest"
	"github.com/zklock/zklock/zktest"
)

// TestMain runs the program itself when the test re-executes its binary
// as pgfence (PGFENCE_MAIN=1), and otherwise the tests, with one
// PostgreSQL server for them all.
func TestMain(m *testing.M) {
	if os.Getenv("PGFENCE_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	code := pgtest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// pgfence starts the program with args; its standard error goes to ours
// and, once it has exited, is in the buffer too.
func pgfence(t *testing.T, args ...string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PGFENCE_MAIN=1")
	stderr := new(bytes.Buffer)
	cmd.Stderr = io.MultiWriter(os.Stderr, stderr)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewScanner(out), stderr
}

// lines reads the rest of the program's output.
func lines(sc *bufio.Scanner) string {
	var b bytes.Buffer
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// TestIntegration_FencedWrites runs pgfence against a real ZooKeeper and
// the PostgreSQL pgtest starts: two holders in turn commit, with rising
// tokens; then a holder paused (SIGSTOP) past its session while the next
// one takes the lock and writes is refused when it resumes (by the
// database; or, if the loss was heard first, by the hold check; or, if its
// session was gone before the loss was heard, by the era read that the
// check needs), and its
// row is not in the table.
func TestIntegration_FencedWrites(t *testing.T) {
	zk := zktest.Start(t)
	dsn := pgtest.Shared(t).NewDatabase(t)
	common := []string{"-servers", strings.Join(zk.Servers(), ","), "-dsn", dsn, "-lock", "/locks/report", "-session-timeout", "1s"}

	for _, v := range []string{"first", "second"} {
		cmd, out, _ := pgfence(t, append(common, "-value", v)...)
		text := lines(out)
		require.NoError(t, cmd.Wait(), text)
		require.Contains(t, text, fmt.Sprintf("committed value=%q", v))
	}

	paused, pausedOut, pausedErr := pgfence(t, append(common, "-value", "stale", "-work", "300ms")...)
	require.True(t, pausedOut.Scan())
	require.Contains(t, pausedOut.Text(), "locked /locks/report token=")
	require.NoError(t, paused.Process.Signal(syscall.SIGSTOP))
	next, nextOut, _ := pgfence(t, append(common, "-value", "current")...)
	text := lines(nextOut)
	require.NoError(t, next.Wait(), text) // it got the lock once the paused one's session expired
	require.NoError(t, paused.Process.Signal(syscall.SIGCONT))
	pausedText := lines(pausedOut)
	err := paused.Wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the paused holder must fail: %v\n%s", err, pausedText)
	switch exit.ExitCode() {
	case exitRefused:
		require.Regexp(t, `^REFUSED by the database: fence: resource "/locks/report": stale token \d+: token \d+ already accepted`, pausedText)
	case exitLost:
		require.Contains(t, pausedText, "lock lost before the write: fence: hold ended")
	case 1: // its era read failed with its session, before the loss was heard
		require.Contains(t, pausedErr.String(), "the hold's ensemble era: ")
		pausedText = pausedErr.String()
	default:
		t.Fatalf("exit status %d:\n%s", exit.ExitCode(), pausedText)
	}
	t.Logf("the paused holder: %s", strings.TrimSpace(pausedText))

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var values []string
	var tokens []int64
	rows, err := db.QueryContext(ctx, "SELECT value, token FROM reports ORDER BY token")
	require.NoError(t, err)
	for rows.Next() {
		var v string
		var tok int64
		require.NoError(t, rows.Scan(&v, &tok))
		values, tokens = append(values, v), append(tokens, tok)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{"first", "second", "current"}, values, "the paused holder's row is absent")
	require.Less(t, tokens[0], tokens[1])
	require.Less(t, tokens[1], tokens[2])
	var fenced int64
	require.NoError(t, db.QueryRowContext(ctx, "SELECT token FROM zklock_fence WHERE resource = '/locks/report'").Scan(&fenced))
	require.Equal(t, tokens[2], fenced)
}
