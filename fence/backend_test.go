package fence_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // "sqlite"

	"github.com/zklock/zklock/internal/pgtest"
)

// A backend is a database the fence is tested on, with the isolation
// levels it offers.
type backend struct {
	name   string
	driver string
	// newDSN returns the DSN of a fresh, empty database; with durable
	// false, its commits do not wait for the disk (SQLite's
	// synchronous=OFF, PostgreSQL's synchronous_commit=off), which changes
	// what a crash of the machine may lose and nothing of what transactions
	// see of each other.
	newDSN func(t *testing.T, durable bool) string
	levels []sql.IsolationLevel
	// lockAtBegin: BEGIN itself takes the write lock (SQLite's immediate
	// transactions), so a second transaction cannot begin until the first
	// ends.
	lockAtBegin bool
}

// open opens a fresh database (see newDSN), closed at the end of t.
func (b backend) open(t *testing.T, durable bool) *sql.DB {
	return openDB(t, b.driver, b.newDSN(t, durable))
}

// backends are SQLite in its two journal modes, with deferred and
// immediate transactions (SQLite is serializable whatever level is asked
// for; both levels database/sql can name are run), and PostgreSQL at read
// committed (its default), repeatable read and serializable.
func backends() []backend {
	var bs []backend
	for _, journal := range []string{"delete", "wal"} {
		for _, lock := range []string{"deferred", "immediate"} {
			bs = append(bs, backend{
				name:   fmt.Sprintf("sqlite-%s-%s", journal, lock),
				driver: "sqlite",
				newDSN: func(t *testing.T, durable bool) string {
					dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(10000)&_pragma=journal_mode(%s)&_txlock=%s",
						filepath.Join(t.TempDir(), "fence.db"), journal, lock)
					if !durable {
						dsn += "&_pragma=synchronous(off)"
					}
					return dsn
				},
				levels:      []sql.IsolationLevel{sql.LevelDefault, sql.LevelSerializable},
				lockAtBegin: lock == "immediate",
			})
		}
	}
	bs = append(bs, backend{
		name:   "postgres",
		driver: "pgx",
		newDSN: func(t *testing.T, durable bool) string {
			u, err := url.Parse(pgtest.Shared(t).NewDatabase(t))
			require.NoError(t, err)
			q := u.Query()
			q.Set("synchronous_commit", map[bool]string{true: "on", false: "off"}[durable]) // pgx sends it at connection start
			u.RawQuery = q.Encode()
			return u.String()
		},
		levels: []sql.IsolationLevel{sql.LevelReadCommitted, sql.LevelRepeatableRead, sql.LevelSerializable},
	})
	return bs
}

func openDB(t *testing.T, driver, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	require.NoError(t, db.PingContext(t.Context()))
	return db
}

// eachLevel runs f as a subtest for every backend and isolation level, on
// a fresh database per backend (durable or not, see backend.newDSN). With
// distinct, SQLite runs at one level only: its driver begins every level's
// transaction the same way.
func eachLevel(t *testing.T, durable, distinct bool, f func(t *testing.T, b backend, db *sql.DB, opts *sql.TxOptions)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, durable)
			for _, level := range b.levels {
				if distinct && b.name != "postgres" && level != sql.LevelSerializable {
					continue
				}
				t.Run(level.String(), func(t *testing.T) { f(t, b, db, &sql.TxOptions{Isolation: level}) })
			}
		})
	}
}
