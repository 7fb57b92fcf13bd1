package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx", for postgres:// DSNs
	_ "modernc.org/sqlite"             // "sqlite", for files

	"github.com/zklock/zklock/fence"
)

// store is where the job's results go: a table in PostgreSQL or SQLite,
// every write fenced with the leader's token (package fence).
type store struct {
	db       *sql.DB
	resource string // the fence's resource: the election path, or -resource
}

// openStore opens dsn: a postgres:// or postgresql:// URL (pgx), or else a
// SQLite file (modernc.org/sqlite, WAL mode, waiting up to 5 s for a
// lock), and creates its tables if missing.
func openStore(ctx context.Context, dsn, resource string) (*store, error) {
	driver := "sqlite"
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		driver = "pgx"
	} else {
		dsn = "file:" + dsn + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, err
	}
	s := &store{db: db, resource: resource}
	if err := s.setup(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

func (s *store) Close() error { return s.db.Close() }

const resultsDDL = "CREATE TABLE IF NOT EXISTS jobrunner_results" +
	" (value TEXT PRIMARY KEY, resource TEXT NOT NULL, writer TEXT NOT NULL, token BIGINT NOT NULL)"

// setup creates the tables. Runners starting together on a new database
// race to create them: a failed CREATE TABLE IF NOT EXISTS is tried again
// (fence.Setup does the same for its own table).
func (s *store) setup(ctx context.Context) error {
	if err := fence.Setup(ctx, s.db); err != nil {
		return err
	}
	var err error
	for attempt := range 6 {
		time.Sleep(time.Duration(attempt) * 50 * time.Millisecond)
		if _, err = s.db.ExecContext(ctx, resultsDDL); err == nil {
			return nil
		}
		if _, probe := s.db.ExecContext(ctx, "SELECT value FROM jobrunner_results WHERE 1 = 0"); probe == nil {
			return nil // another runner created it
		}
	}
	return fmt.Errorf("create jobrunner_results: %w", err)
}

// write stores value under token, in one transaction with the fence's
// check: the database refuses it (an error wrapping fence.ErrStale) if a
// later leader's token has been accepted.
func (s *store) write(ctx context.Context, writer string, token int64, value string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fence.Check(ctx, tx, s.resource, token); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO jobrunner_results (value, resource, writer, token) VALUES ($1, $2, $3, $4)",
		value, s.resource, writer, token); err != nil {
		return err
	}
	return tx.Commit()
}

// report prints the fence's token and every result stored for the
// resource, one line each, ordered by token; with drop, it then deletes
// them (a demo run on a shared database).
func (s *store) report(ctx context.Context, out io.Writer, drop bool) error {
	var accepted int64
	err := s.db.QueryRowContext(ctx, "SELECT token FROM "+fence.DefaultTable+" WHERE resource = $1", s.resource).Scan(&accepted)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	fmt.Fprintf(out, "[db] %s resource=%s token=%d\n", fence.DefaultTable, s.resource, accepted)
	rows, err := s.db.QueryContext(ctx, "SELECT writer, token, value FROM jobrunner_results WHERE resource = $1 ORDER BY token, value", s.resource)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var writer, value string
		var token int64
		if err := rows.Scan(&writer, &token, &value); err != nil {
			return err
		}
		fmt.Fprintf(out, "[db] row writer=%s token=%d value=%q\n", writer, token, value)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !drop {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM jobrunner_results WHERE resource = $1", s.resource); err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, "DELETE FROM "+fence.DefaultTable+" WHERE resource = $1", s.resource)
	return err
}
