// Command pgfence takes a zklock mutex and writes one row to PostgreSQL in
// a transaction fenced with the hold's token (package fence), so that the
// database refuses the write if the lock has meanwhile passed to another
// holder: a process paused (GC, swap, SIGSTOP) past its session wakes up
// refused, not writing beside the next holder.
//
//	pgfence -servers 127.0.0.1:2181 -dsn postgres://app@127.0.0.1:5432/app -lock /locks/report -value 'Q3 totals'
//
// The DSN is -dsn, or else $DATABASE_URL. It connects to ZooKeeper and to
// PostgreSQL (github.com/jackc/pgx/v5/stdlib), creates the tables it needs
// (zklock_fence, reports) if missing, takes the lock, works for -work, then
// writes the row in one transaction with fence.CheckHold and releases the
// lock. It prints one line per step:
//
//	locked /locks/report token=4294967302
//	committed value="Q3 totals" token=4294967302
//	REFUSED by the database: fence: resource "/locks/report": stale token 4294967302: token 4294967310 already accepted
//	lock lost before the write: fence: hold ended: resource "/locks/report": zklock: lock lost: zklock: session expired
//
// Exit status: 0 committed, 1 error, 2 usage, 3 refused by the database
// (fence.ErrStale), 4 lock lost before the write (fence.ErrHoldEnded).
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
)

type config struct {
	servers        string
	dsn            string
	lock           string
	value          string
	work           time.Duration
	sessionTimeout time.Duration
}

// Exit statuses besides 0 (committed), 1 (error) and 2 (usage).
const (
	exitRefused = 3
	exitLost    = 4
)

func main() {
	var c config
	flag.StringVar(&c.servers, "servers", "127.0.0.1:2181", "ZooKeeper servers, host:port,...")
	flag.StringVar(&c.dsn, "dsn", os.Getenv("DATABASE_URL"), "PostgreSQL URL (default $DATABASE_URL)")
	flag.StringVar(&c.lock, "lock", "/locks/report", "the lock's path, also the fenced resource's name")
	flag.StringVar(&c.value, "value", "", "the row to write (required)")
	flag.DurationVar(&c.work, "work", 0, "how long to work under the lock before writing")
	flag.DurationVar(&c.sessionTimeout, "session-timeout", 10*time.Second, "ZooKeeper session timeout")
	flag.Parse()
	if c.dsn == "" || c.value == "" || c.work < 0 {
		fmt.Fprintln(os.Stderr, "pgfence: -dsn (or $DATABASE_URL) and -value are required, -work must not be negative")
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := run(ctx, c, os.Stdout)
	switch {
	case err == nil:
	case errors.Is(err, fence.ErrStale):
		fmt.Printf("REFUSED by the database: %v\n", err)
		os.Exit(exitRefused)
	case errors.Is(err, fence.ErrHoldEnded):
		fmt.Printf("lock lost before the write: %v\n", err)
		os.Exit(exitLost)
	default:
		fmt.Fprintf(os.Stderr, "pgfence: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config, out io.Writer) error {
	db, err := sql.Open("pgx", c.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := fence.Setup(ctx, db); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS reports (value TEXT NOT NULL, token BIGINT NOT NULL)"); err != nil {
		return err
	}

	sess, err := zklock.Connect(strings.Split(c.servers, ","), zklock.WithSessionTimeout(c.sessionTimeout))
	if err != nil {
		return err
	}
	defer sess.Close()
	m, err := zklock.NewMutex(sess, c.lock)
	if err != nil {
		return err
	}
	hold, err := m.Lock(ctx)
	if err != nil {
		return err
	}
	defer hold.Release()
	fmt.Fprintf(out, "locked %s token=%d\n", c.lock, hold.Token())

	time.Sleep(c.work) // the work; a pause here can outlast the lock
	if err := write(ctx, db, hold, c.lock, c.value); err != nil {
		return err
	}
	fmt.Fprintf(out, "committed value=%q token=%d\n", c.value, hold.Token())
	return nil
}

// write inserts value in one transaction with the fence's check: nothing
// commits unless hold is live and its token is still the greatest the
// database has accepted for resource.
func write(ctx context.Context, db *sql.DB, hold *zklock.Hold, resource, value string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // after Commit, a no-op
	if err := fence.CheckHold(ctx, tx, resource, hold); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO reports (value, token) VALUES ($1, $2)", value, hold.Token()); err != nil {
		return err
	}
	return tx.Commit()
}
