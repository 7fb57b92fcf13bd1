package reliability

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/zklock/zklock/fence"
)

// The PostgreSQL register (S24): holders write to a table of a real
// PostgreSQL server, each write one transaction that calls fence.Check with
// the hold's token and then inserts the write's row. The register C2 judges
// is then the database itself: the rows it committed, read once everything
// has stopped (ReadPG), against the outcome each worker saw of each
// transaction (PGWrite).
//
// Each row records its place in its resource's commit order: the
// transaction takes the next number from the resource's row of
// reliability_order, whose row lock it holds until it ends, so on one
// resource the numbers follow the order in which the transactions
// committed, at every isolation level (at repeatable read and serializable
// a transaction that would take a number from under a later commit fails
// with a serialization error instead). Rolled-back transactions leave no
// gap.

// Outcomes of a transaction on the PostgreSQL register, as its worker saw
// them (the Out of a pgwrite event).
const (
	OutCommitted = "committed" // COMMIT succeeded
	OutStale     = "stale"     // fence.Check refused the token; rolled back
	OutOtherEra  = "other-era" // fence.CheckEra refused a token of another ensemble era; rolled back
	OutError     = "error"     // failed before COMMIT, or the server refused the COMMIT: not committed
	OutUnknown   = "unknown"   // COMMIT sent and not answered (connection lost, deadline): may have committed
)

// PGTxTimeout bounds one transaction on the PostgreSQL register: a writer
// may wait that long for the row lock of a paused holder's transaction.
const PGTxTimeout = 15 * time.Second

const (
	pgWrites = "reliability_writes"
	pgOrder  = "reliability_order"
)

// PGSetup creates the register's tables and the fence's table in db, with
// one order row for each of resources.
func PGSetup(ctx context.Context, db *sql.DB, resources []string) error {
	if err := fence.Setup(ctx, db); err != nil {
		return err
	}
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + pgOrder + " (resource TEXT PRIMARY KEY, n BIGINT NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + pgWrites + " (resource TEXT NOT NULL, n BIGINT NOT NULL, token BIGINT NOT NULL, era TEXT NOT NULL," +
			" elem TEXT NOT NULL, PRIMARY KEY (resource, n))",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("pg register: %w", err)
		}
	}
	for _, r := range resources {
		if _, err := db.ExecContext(ctx, "INSERT INTO "+pgOrder+" (resource, n) VALUES ($1, 0) ON CONFLICT DO NOTHING", r); err != nil {
			return fmt.Errorf("pg register: order row %s: %w", r, err)
		}
	}
	return nil
}

// A FenceMode is how PGWrite fences a write.
type FenceMode int

const (
	FenceToken FenceMode = iota // fence.Check: the token alone (S24)
	FenceEra                    // fence.CheckEra: the token and its ensemble era (S25)
	FenceOff                    // no check (the negative control N7)
)

// PGWrite makes one write of the register: a transaction at isolation iso
// that fences the write as mode says and inserts the row (resource, its
// place, token, era, elem). It returns the outcome (OutCommitted, OutStale,
// OutOtherEra, OutError or OutUnknown) and the error that decided it.
func PGWrite(ctx context.Context, db *sql.DB, iso sql.IsolationLevel, resource string, token int64, era, elem string, mode FenceMode) (string, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: iso})
	if err != nil {
		return OutError, err
	}
	if mode != FenceOff {
		if mode == FenceEra {
			err = fence.CheckEra(ctx, tx, resource, token, era)
		} else {
			err = fence.Check(ctx, tx, resource, token)
		}
		if err != nil {
			tx.Rollback()
			switch {
			case errors.Is(err, fence.ErrStale):
				return OutStale, err
			case errors.Is(err, fence.ErrOtherEnsemble):
				return OutOtherEra, err
			}
			return OutError, err
		}
	}
	res, err := tx.ExecContext(ctx, "WITH o AS (UPDATE "+pgOrder+" SET n = n + 1 WHERE resource = $1 RETURNING n) "+
		"INSERT INTO "+pgWrites+" (resource, n, token, era, elem) SELECT $1, n, $2, $3, $4 FROM o", resource, token, era, elem)
	if err == nil {
		if n, rerr := res.RowsAffected(); rerr != nil || n != 1 {
			err = fmt.Errorf("pg register: %d rows inserted for %s (%v)", n, resource, rerr)
		}
	}
	if err != nil {
		tx.Rollback()
		return OutError, err
	}
	if err := tx.Commit(); err != nil {
		return commitOutcome(err), err
	}
	return OutCommitted, nil
}

// commitOutcome classifies a failed COMMIT: OutError when the server said
// the transaction was rolled back (SQLSTATE class 40, a serialization
// failure or deadlock, or class 23, a deferred constraint; or pgx's "commit
// unexpectedly resulted in rollback"), OutUnknown otherwise. A connection
// lost or a deadline passed while COMMIT was in flight, and any other
// error, even one the server sent (it may come after the commit, as an
// administrator's termination does), leaves the outcome unknown.
func commitOutcome(err error) string {
	var pe *pgconn.PgError
	if errors.Is(err, pgx.ErrTxCommitRollback) || errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "40") || strings.HasPrefix(pe.Code, "23")) {
		return OutError
	}
	return OutUnknown
}

// ReadPG reads the register after the run into log: each row (a pgrow event:
// its resource, place, token, era and element, in commit order per
// resource), each row of the fence's table (pgfence: the greatest token it
// accepted per resource, and its era), and a pgread event that counts the
// rows.
func ReadPG(ctx context.Context, db *sql.DB, log *Log) error {
	rows, err := db.QueryContext(ctx, "SELECT resource, n, token, era, elem FROM "+pgWrites+" ORDER BY resource, n")
	if err != nil {
		return fmt.Errorf("pg register: read rows: %w", err)
	}
	var n int64
	for rows.Next() {
		e := Event{Kind: KindPGRow}
		if err := rows.Scan(&e.Lock, &e.Seq, &e.Token, &e.Era, &e.Elem); err != nil {
			rows.Close()
			return fmt.Errorf("pg register: read rows: %w", err)
		}
		log.Add(e)
		n++
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("pg register: read rows: %w", err)
	}
	frows, err := db.QueryContext(ctx, "SELECT resource, token, era FROM "+fence.DefaultTable+" ORDER BY resource")
	if err != nil {
		return fmt.Errorf("pg register: read fence: %w", err)
	}
	for frows.Next() {
		e := Event{Kind: KindPGFence}
		if err := frows.Scan(&e.Lock, &e.Token, &e.Era); err != nil {
			frows.Close()
			return fmt.Errorf("pg register: read fence: %w", err)
		}
		log.Add(e)
	}
	if err := errors.Join(frows.Err(), frows.Close()); err != nil {
		return fmt.Errorf("pg register: read fence: %w", err)
	}
	log.Add(Event{Kind: KindPGRead, Seq: n})
	return nil
}
