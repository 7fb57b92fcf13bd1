package fence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxEra bounds an era's length: zklock's are 32 hex digits.
const maxEra = 64

func validEra(era string) error {
	switch {
	case era == "":
		return invalid("empty ensemble era")
	case len(era) > maxEra || !utf8.ValidString(era) || strings.ContainsFunc(era, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return invalid("ensemble era %q is not at most %d bytes of printable text", era, maxEra)
	}
	return nil
}

// Rebase moves resources from the ensemble era from to the era to, after
// the ensemble was rebuilt from empty (to is the new ensemble's
// zklock.Session.Era): from then on CheckEra passes the new era's tokens,
// from the lowest up, and refuses every token of from, whatever its value.
// It changes all the resources in one transaction, or none: each must be
// recorded in era from (from "" names a row written before eras), and from
// and to must differ; otherwise it returns an error wrapping ErrRebase and
// changes nothing (a resource without a row too: a misspelt name is told).
//
// Caution: run it only once the ensemble of era to is the one the lock
// holders use; a token of from (a holder of the old ensemble) passes again
// only after another Rebase, back.
func (f *Fence) Rebase(ctx context.Context, db *sql.DB, from, to string, resources ...string) error {
	if ctx == nil || db == nil {
		return invalid("Rebase needs a context and a *sql.DB")
	}
	if err := validEra(to); err != nil {
		return err
	}
	if from != "" {
		if err := validEra(from); err != nil {
			return err
		}
	}
	if from == to {
		return fmt.Errorf("%w: the old and the new era are both %s", ErrRebase, to)
	}
	if len(resources) == 0 {
		return invalid("Rebase needs at least one resource")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("fence: rebase: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	for _, r := range resources {
		if err := f.rebaseOne(ctx, tx, r, from, to); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("fence: rebase: commit: %w", err)
	}
	return nil
}

// rebaseOne moves resource from era from to era to inside tx, resetting its
// token to 1 (every token is positive); the era condition and the update
// are one statement, so a concurrent Check is ordered before or after it.
func (f *Fence) rebaseOne(ctx context.Context, tx *sql.Tx, resource, from, to string) error {
	if err := validResource(resource); err != nil {
		return err
	}
	t := f.Table()
	res, err := tx.ExecContext(ctx, "UPDATE "+t+" SET era = $1, token = 1 WHERE resource = $2 AND era = $3", to, resource, from)
	if err != nil {
		return fmt.Errorf("fence: rebase resource %q in %s: %w", resource, t, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var (
		token int64
		era   string
	)
	err = tx.QueryRowContext(ctx, "SELECT token, era FROM "+t+" WHERE resource = $1", resource).Scan(&token, &era)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: resource %q has no row in %s", ErrRebase, resource, t)
	case err != nil:
		return fmt.Errorf("fence: rebase resource %q in %s: %w", resource, t, err)
	case era == to:
		return fmt.Errorf("%w: resource %q is already in era %s (token %d accepted)", ErrRebase, resource, to, token)
	}
	return fmt.Errorf("%w: resource %q is in era %q (token %d accepted), not %q", ErrRebase, resource, era, token, from)
}

// Rebase moves resources of DefaultTable from era from to era to; see
// Fence.Rebase.
func Rebase(ctx context.Context, db *sql.DB, from, to string, resources ...string) error {
	return defaultFence.Rebase(ctx, db, from, to, resources...)
}
