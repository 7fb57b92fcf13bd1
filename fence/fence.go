package fence

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultTable is the table Setup, Check and CheckHold use, and a Fence
// made without WithTable.
const DefaultTable = "zklock_fence"

// A Fence is a fencing table: one row per resource, holding the greatest
// token accepted for it. The zero Fence uses DefaultTable; New names
// another. A Fence holds no connection and is safe for concurrent use.
type Fence struct {
	table string
}

// An Option configures a Fence made by New.
type Option func(*config)

type config struct {
	table string
}

// WithTable names the fencing table: a lowercase SQL identifier (letters,
// digits, underscores, not starting with a digit, at most 63 bytes),
// optionally qualified by a schema as "schema.table". Default DefaultTable.
func WithTable(name string) Option {
	return func(c *config) { c.table = name }
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}(\.[a-z_][a-z0-9_]{0,62})?$`)

// New returns a Fence configured by opts. It returns an error wrapping
// ErrInvalidArgument for a table name that is not a plain identifier (see
// WithTable): the name is spliced into SQL, so nothing else is accepted.
func New(opts ...Option) (*Fence, error) {
	c := config{table: DefaultTable}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if !identifier.MatchString(c.table) {
		return nil, invalid("table name %q is not a lowercase identifier (schema.table at most)", c.table)
	}
	return &Fence{table: c.table}, nil
}

// Table returns the name of the fencing table.
func (f *Fence) Table() string {
	if f == nil || f.table == "" {
		return DefaultTable
	}
	return f.table
}

// Setup creates the fencing table if it does not exist, and checks that
// the table it finds has the columns Check uses. It may run again at every
// start, and from several processes at once: a CREATE that fails while the
// table is still missing (another process is creating it: PostgreSQL's
// catalog race, SQLite's busy database) is tried again, up to 6 times
// within about a second. The table is
//
//	CREATE TABLE zklock_fence (resource TEXT PRIMARY KEY, token BIGINT NOT NULL CHECK (token > 0))
//
// Create it that way yourself (in a migration, say) if the application's
// database user may not create tables.
func (f *Fence) Setup(ctx context.Context, db *sql.DB) error {
	if ctx == nil || db == nil {
		return invalid("Setup needs a context and a *sql.DB")
	}
	wait := 25 * time.Millisecond
	for attempt := 1; ; attempt++ {
		again, err := f.setupOnce(ctx, db)
		if !again || attempt == setupAttempts {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

const setupAttempts = 6

// setupOnce creates the table if missing and probes it; again is true when
// the create failed and the table is not there (yet).
func (f *Fence) setupOnce(ctx context.Context, db *sql.DB) (again bool, err error) {
	t := f.Table()
	_, createErr := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+t+
		" (resource TEXT PRIMARY KEY, token BIGINT NOT NULL CHECK (token > 0))")
	rows, err := db.QueryContext(ctx, "SELECT resource, token FROM "+t+" WHERE 1 = 0")
	if err != nil {
		if createErr != nil {
			return true, fmt.Errorf("fence: create table %s: %w", t, createErr)
		}
		return false, fmt.Errorf("fence: table %s is not a fencing table (resource, token): %w", t, err)
	}
	return false, rows.Close()
}

// Check records token as accepted for resource inside tx, unless a greater
// token was already accepted for it: then it returns a *StaleError (which
// wraps ErrStale, and names both tokens) and the caller must roll tx back,
// so that none of the writes it made in tx commit. An equal token is
// accepted: one holder writes many times under its token.
//
// The check and the record are one statement (an upsert that keeps the
// greater token and returns it), so two transactions with different tokens
// never both commit with the smaller one last, at any isolation level: at
// read committed the later one waits for the earlier one's row lock and
// then sees its token; at PostgreSQL's repeatable read and serializable
// levels it may fail instead with a serialization error (SQLSTATE 40001),
// to be retried as any other. The row stays locked until tx ends, so keep
// fenced transactions short; check first, before the transaction's other
// writes, to learn early that it is doomed.
//
// Check never commits or rolls back tx. Errors of the database (the table
// is missing, tx is done) are returned wrapped.
func (f *Fence) Check(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	if ctx == nil || tx == nil {
		return invalid("Check needs a context and a *sql.Tx")
	}
	if err := validResource(resource); err != nil {
		return err
	}
	if token <= 0 {
		return invalid("resource %q: token %d is not positive (zklock's tokens are)", resource, token)
	}
	t := f.Table()
	var accepted int64
	err := tx.QueryRowContext(ctx, "INSERT INTO "+t+" AS f (resource, token) VALUES ($1, $2)"+
		" ON CONFLICT (resource) DO UPDATE SET token ="+
		" CASE WHEN f.token < excluded.token THEN excluded.token ELSE f.token END"+
		" RETURNING token", resource, token).Scan(&accepted)
	if err != nil {
		return fmt.Errorf("fence: check resource %q token %d in %s: %w", resource, token, t, err)
	}
	if accepted > token {
		return &StaleError{Resource: resource, Token: token, Accepted: accepted}
	}
	return nil
}

func validResource(resource string) error {
	switch {
	case resource == "":
		return invalid("empty resource name")
	case !utf8.ValidString(resource) || strings.IndexByte(resource, 0) >= 0:
		return invalid("resource name %q is not valid UTF-8 text without NUL", resource)
	}
	return nil
}

// defaultFence serves the package-level functions.
var defaultFence Fence

// Setup creates DefaultTable if it does not exist; see Fence.Setup.
func Setup(ctx context.Context, db *sql.DB) error { return defaultFence.Setup(ctx, db) }

// Check fences tx with token for resource in DefaultTable; see Fence.Check.
func Check(ctx context.Context, tx *sql.Tx, resource string, token int64) error {
	return defaultFence.Check(ctx, tx, resource, token)
}
