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
//	CREATE TABLE zklock_fence (resource TEXT PRIMARY KEY,
//		token BIGINT NOT NULL CHECK (token > 0), era TEXT NOT NULL DEFAULT '')
//
// A table of an earlier version, without the era column, gets it (ALTER
// TABLE ... ADD COLUMN era TEXT NOT NULL DEFAULT ”); its rows keep their
// tokens and take the era of the first CheckEra that passes them. Create or
// alter the table that way yourself (in a migration, say) if the
// application's database user may not.
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

// setupOnce creates the table if missing, adds the era column to a table
// of an earlier version, and probes it; again is true when a create or an
// alter failed and the table is not complete (yet).
func (f *Fence) setupOnce(ctx context.Context, db *sql.DB) (again bool, err error) {
	t := f.Table()
	_, createErr := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+t+
		" (resource TEXT PRIMARY KEY, token BIGINT NOT NULL CHECK (token > 0), era TEXT NOT NULL DEFAULT '')")
	if probe(ctx, db, t, "resource, token, era") == nil {
		return false, nil
	}
	if err := probe(ctx, db, t, "resource, token"); err != nil {
		if createErr != nil {
			return true, fmt.Errorf("fence: create table %s: %w", t, createErr)
		}
		return false, fmt.Errorf("fence: table %s is not a fencing table (resource, token): %w", t, err)
	}
	if _, err := db.ExecContext(ctx, "ALTER TABLE "+t+" ADD COLUMN era TEXT NOT NULL DEFAULT ''"); err != nil {
		return true, fmt.Errorf("fence: add column era to %s: %w", t, err)
	}
	return false, probe(ctx, db, t, "resource, token, era")
}

// probe selects columns from table t, reading no row.
func probe(ctx context.Context, db *sql.DB, t, columns string) error {
	rows, err := db.QueryContext(ctx, "SELECT "+columns+" FROM "+t+" WHERE 1 = 0")
	if err != nil {
		return err
	}
	return rows.Close()
}

// Check records token as accepted for resource inside tx, unless a greater
// token was already accepted for it: then it returns a *StaleError (which
// wraps ErrStale, and names both tokens) and the caller must roll tx back,
// so that none of the writes it made in tx commit. An equal token is
// accepted: one holder writes many times under its token.
//
// Check compares tokens only, which cannot survive an ensemble rebuilt
// from empty (its tokens start low again): prefer CheckEra or CheckHold,
// which also compare the ensemble's era. A resource once fenced with an
// era refuses Check with an *EnsembleError.
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
	return f.check(ctx, tx, resource, token, "")
}

// CheckEra is Check for a token of the ensemble era era (zklock's
// Hold.Era): it passes only a token of the era the resource has recorded,
// and refuses a token of any other era with an *EnsembleError (which wraps
// ErrOtherEnsemble and names both tokens and eras), whatever the tokens.
// A resource's first check, or the first that passes on a row written
// before eras, records its era. After an ensemble is rebuilt, Rebase moves
// a resource to the new era.
func (f *Fence) CheckEra(ctx context.Context, tx *sql.Tx, resource string, token int64, era string) error {
	if err := validEra(era); err != nil {
		return err
	}
	return f.check(ctx, tx, resource, token, era)
}

// check is Check ("" era) and CheckEra. The upsert raises the token only
// within the recorded era, or on a row without one, which then takes the
// era; the era it returns tells another era's token from a stale one.
func (f *Fence) check(ctx context.Context, tx *sql.Tx, resource string, token int64, era string) error {
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
	var (
		accepted    int64
		acceptedEra string
	)
	err := tx.QueryRowContext(ctx, "INSERT INTO "+t+" AS f (resource, token, era) VALUES ($1, $2, $3)"+
		" ON CONFLICT (resource) DO UPDATE SET"+
		" token = CASE WHEN (f.era = excluded.era OR f.era = '') AND f.token < excluded.token"+
		" THEN excluded.token ELSE f.token END,"+
		" era = CASE WHEN f.era = '' AND f.token <= excluded.token THEN excluded.era ELSE f.era END"+
		" RETURNING token, era", resource, token, era).Scan(&accepted, &acceptedEra)
	if err != nil {
		return fmt.Errorf("fence: check resource %q token %d in %s: %w", resource, token, t, err)
	}
	switch {
	case acceptedEra != era && acceptedEra != "":
		return &EnsembleError{Resource: resource, Token: token, Era: era, Accepted: accepted, AcceptedEra: acceptedEra}
	case accepted > token:
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

// CheckEra fences tx with token of era for resource in DefaultTable; see
// Fence.CheckEra.
func CheckEra(ctx context.Context, tx *sql.Tx, resource string, token int64, era string) error {
	return defaultFence.CheckEra(ctx, tx, resource, token, era)
}
