package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// TestIntegration_StartQueryClose starts a server of its own, runs SQL on
// it through pgx, and checks that Close stops every process of the server
// and removes its directory.
func TestIntegration_StartQueryClose(t *testing.T) {
	if os.Getenv("PG_DSN") != "" {
		t.Skip("PG_DSN: no server of our own to watch")
	}
	s, err := Launch(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	db, err := sql.Open("pgx", s.DSN())
	require.NoError(t, err)
	var user string
	var port int
	require.NoError(t, db.QueryRow("SELECT current_user, current_setting('port')::int").Scan(&user, &port))
	require.Equal(t, "postgres", user)
	require.Contains(t, s.DSN(), fmt.Sprintf("127.0.0.1:%d", port))
	if os.Geteuid() == 0 {
		st, err := os.Stat(filepath.Join(s.dir, "data"))
		require.NoError(t, err)
		require.NotZero(t, st.Sys().(*syscall.Stat_t).Uid, "the server runs unprivileged")
	}
	require.NoError(t, db.Close())

	pid := s.Pid()
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "closing twice")
	require.NoDirExists(t, s.dir)
	require.Eventually(t, func() bool { return syscall.Kill(-pid, 0) != nil }, 10*time.Second, 20*time.Millisecond,
		"a process of the server's group is left")
}

// TestIntegration_SharedDatabases gives two tests' worth of databases on
// the shared server: each is empty, they do not see each other's tables,
// and a dropped one is gone.
func TestIntegration_SharedDatabases(t *testing.T) {
	s := Shared(t)
	require.Same(t, s, Shared(t))
	ctx := t.Context()
	dsn1, drop1, err := s.CreateDatabase(ctx)
	require.NoError(t, err)
	dsn2 := s.NewDatabase(t)
	require.NotEqual(t, dsn1, dsn2)
	db1, err := sql.Open("pgx", dsn1)
	require.NoError(t, err)
	defer db1.Close()
	db2, err := sql.Open("pgx", dsn2)
	require.NoError(t, err)
	defer db2.Close()
	_, err = db1.ExecContext(ctx, "CREATE TABLE only_here (x int)")
	require.NoError(t, err)
	_, err = db2.ExecContext(ctx, "SELECT * FROM only_here")
	require.Error(t, err)
	require.NoError(t, db1.Close())
	require.NoError(t, drop1())
	admin, err := sql.Open("pgx", s.DSN())
	require.NoError(t, err)
	defer admin.Close()
	var n int
	u, err := url.Parse(dsn1)
	require.NoError(t, err)
	require.NoError(t, admin.QueryRowContext(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1",
		strings.TrimPrefix(u.Path, "/")).Scan(&n))
	require.Zero(t, n, "the dropped database is gone")
}

// TestIntegration_ReapOrphans kills a server whose owner died without
// closing it: a child process launches one and is SIGKILLed; the next
// reap finds the server (if Pdeathsig has not already ended it) and
// removes its directory.
func TestIntegration_ReapOrphans(t *testing.T) {
	if os.Getenv("PG_DSN") != "" {
		t.Skip("PG_DSN: no server of our own")
	}
	if os.Getenv("PGTEST_ORPHAN_CHILD") != "" {
		s, err := Launch(context.Background())
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Printf("dir %s pid %d\n", s.dir, s.Pid())
		time.Sleep(time.Minute) // killed by the parent long before
		os.Exit(0)
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestIntegration_ReapOrphans$")
	cmd.Env = append(os.Environ(), "PGTEST_ORPHAN_CHILD=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	var dir string
	var pid int
	_, err = fmt.Fscanf(out, "dir %s pid %d\n", &dir, &pid)
	require.NoError(t, err)
	require.DirExists(t, dir)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	book.Reap()
	require.NoDirExists(t, dir)
	require.Eventually(t, func() bool { return syscall.Kill(-pid, 0) != nil }, 10*time.Second, 20*time.Millisecond,
		"the orphan server's processes are left")
}

func TestBadSetting(t *testing.T) {
	if os.Getenv("PG_DSN") != "" {
		t.Skip("PG_DSN: settings are not applied")
	}
	_, err := Launch(context.Background(), WithSetting("a=b", "c"))
	require.ErrorContains(t, err, "bad setting")
}
