package reliability

import (
	"context"
	"database/sql"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/pgtest"
)

// startDatabase gives the run of a Postgres scenario a fresh database on the
// test binary's PostgreSQL server (pgtest.Shared: one server for the whole
// suite, stopped when the binary ends; PG_DSN names an existing one), with
// the register's and the fence's tables, and returns the suite's own
// connection to it. The database is dropped at the end of the test, once its
// contents are in the run's history (readDatabase).
func (e *Env) startDatabase(t testing.TB) *sql.DB {
	t.Helper()
	dsn := pgtest.Shared(t).NewDatabase(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	resources := make([]string, e.Sc.Locks)
	for i := range resources {
		resources[i] = "lock-" + strconv.Itoa(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := PGSetup(ctx, db, resources); err != nil {
		t.Fatalf("postgres: %v", err)
	}
	e.pgDSN = dsn
	return db
}

// readDatabase reads the PostgreSQL register once every worker has stopped
// into the run's database.jsonl (ReadPG) and returns its path ("" if it
// could not be created); a failed read is one of the run's errors (and C2
// reports the database unread).
func (e *Env) readDatabase(db *sql.DB, res *Result) string {
	p := filepath.Join(e.Dir, "database.jsonl")
	log, err := CreateLog(p)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ReadPG(ctx, db, log); err != nil {
		res.Errors = append(res.Errors, err.Error())
	}
	if err := log.Close(); err != nil {
		res.Errors = append(res.Errors, err.Error())
	}
	return p
}
