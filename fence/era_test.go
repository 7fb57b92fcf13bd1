package fence_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/fence"
)

// TestCheckEraContract checks CheckEra's rule on every backend, one
// committed transaction per step: within the recorded era tokens are
// compared as by Check; a token of another era is refused with an
// *EnsembleError whatever its value, and so is an era-less Check; after
// Rebase the new era's lowest token passes and the old era's greatest is
// refused.
func TestCheckEraContract(t *testing.T) {
	eachLevel(t, true, true, func(t *testing.T, b backend, db *sql.DB, opts *sql.TxOptions) {
		ctx := t.Context()
		require.NoError(t, fence.Setup(ctx, db))
		resource := t.Name()
		const old, cur = "0ld", "n3w"
		type want int
		const (
			ok want = iota
			stale
			other
		)
		step := func(token int64, era string, w want, accepted int64, acceptedEra string) {
			t.Helper()
			tx, err := db.BeginTx(ctx, opts)
			require.NoError(t, err)
			defer tx.Rollback()
			if era == "" {
				err = fence.Check(ctx, tx, resource, token)
			} else {
				err = fence.CheckEra(ctx, tx, resource, token, era)
			}
			switch w {
			case ok:
				require.NoError(t, err)
				require.NoError(t, tx.Commit())
			case stale:
				require.ErrorIs(t, err, fence.ErrStale)
				require.NotErrorIs(t, err, fence.ErrOtherEnsemble)
			case other:
				require.ErrorIs(t, err, fence.ErrOtherEnsemble)
				require.NotErrorIs(t, err, fence.ErrStale)
				var ee *fence.EnsembleError
				require.ErrorAs(t, err, &ee)
				require.Equal(t, fence.EnsembleError{Resource: resource, Token: token, Era: era, Accepted: accepted, AcceptedEra: acceptedEra}, *ee)
			}
		}
		step(1<<33+5, old, ok, 0, "")
		step(1<<33+9, old, ok, 0, "")
		step(1<<33+7, old, stale, 0, "")
		step(12, cur, other, 1<<33+9, old)      // the rebuilt ensemble's first holder
		step(1<<40, cur, other, 1<<33+9, old)   // another era, even a greater token
		step(1<<33+10, "", other, 1<<33+9, old) // no era at all
		require.Equal(t, row{1<<33 + 9, old}, readRow(t, db, resource), "refusals change nothing")

		require.ErrorIs(t, fence.Rebase(ctx, db, cur, cur, resource), fence.ErrRebase, "the same era")
		require.ErrorIs(t, fence.Rebase(ctx, db, "elsewhere", cur, resource), fence.ErrRebase, "not the recorded era")
		require.NoError(t, fence.Rebase(ctx, db, old, cur, resource))
		require.ErrorIs(t, fence.Rebase(ctx, db, old, cur, resource), fence.ErrRebase, "twice")
		require.Equal(t, row{1, cur}, readRow(t, db, resource))

		step(12, cur, ok, 0, "")
		step(1<<33+9, old, other, 12, cur) // the paused holder of the old ensemble
		step(1<<62, old, other, 12, cur)
		step(13, cur, ok, 0, "")
		step(12, cur, stale, 0, "")
	})
}

// TestRebaseAllOrNothing: Rebase changes every resource it names or none;
// a missing row, a wrong era and bad arguments are refused.
func TestRebaseAllOrNothing(t *testing.T) {
	db := backends()[0].open(t, true)
	ctx := t.Context()
	require.NoError(t, fence.Setup(ctx, db))
	seedEras(t, db, map[string]string{"a": "e1", "b": "e1", "c": "e2"})
	err := fence.Rebase(ctx, db, "e1", "e3", "a", "b", "c")
	require.ErrorIs(t, err, fence.ErrRebase)
	require.ErrorContains(t, err, `resource "c" is in era "e2"`)
	require.ErrorIs(t, fence.Rebase(ctx, db, "e1", "e3", "a", "missing"), fence.ErrRebase)
	for _, r := range []string{"a", "b"} {
		require.Equal(t, row{100, "e1"}, readRow(t, db, r), "nothing changed")
	}
	for name, args := range map[string][3]string{
		"empty to":    {"e1", "", "a"},
		"bad to":      {"e1", "e 3", "a"},
		"long from":   {string(make([]byte, 65)), "e3", "a"},
		"no resource": {"e1", "e3", ""},
	} {
		require.ErrorIs(t, fence.Rebase(ctx, db, args[0], args[1], args[2]), fence.ErrInvalidArgument, name)
	}
	require.ErrorIs(t, fence.Rebase(ctx, db, "e1", "e3"), fence.ErrInvalidArgument, "no resources")
	require.NoError(t, fence.Rebase(ctx, db, "e1", "e3", "a", "b"))
	require.Equal(t, row{1, "e3"}, readRow(t, db, "b"))
}

// TestSetupMigrates: a table of the version before eras gets the era
// column from Setup, on every backend; its rows keep their tokens, and the
// first CheckEra that passes binds a row to its era (a stale one does not),
// after which an era-less Check is refused. Rebase from "" moves a row
// that has none.
func TestSetupMigrates(t *testing.T) {
	for _, b := range []backend{backends()[0], backends()[len(backends())-1]} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, true)
			ctx := t.Context()
			_, err := db.ExecContext(ctx, "CREATE TABLE "+fence.DefaultTable+" (resource TEXT PRIMARY KEY, token BIGINT NOT NULL CHECK (token > 0))")
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, "INSERT INTO "+fence.DefaultTable+" (resource, token) VALUES ('a', 50), ('b', 50)")
			require.NoError(t, err)
			require.NoError(t, fence.Setup(ctx, db))
			require.NoError(t, fence.Setup(ctx, db), "again")
			require.Equal(t, row{50, ""}, readRow(t, db, "a"))

			check := func(token int64, era string) error {
				tx, err := db.BeginTx(ctx, nil)
				require.NoError(t, err)
				defer tx.Rollback()
				if era == "" {
					err = fence.Check(ctx, tx, "a", token)
				} else {
					err = fence.CheckEra(ctx, tx, "a", token, era)
				}
				if err != nil {
					return err
				}
				return tx.Commit()
			}
			require.NoError(t, check(50, ""), "an old row serves Check as before")
			require.ErrorIs(t, check(49, "e1"), fence.ErrStale)
			require.Equal(t, row{50, ""}, readRow(t, db, "a"), "a stale check binds no era")
			require.NoError(t, check(50, "e1"))
			require.Equal(t, row{50, "e1"}, readRow(t, db, "a"))
			require.ErrorIs(t, check(51, ""), fence.ErrOtherEnsemble)
			require.ErrorIs(t, check(51, "e2"), fence.ErrOtherEnsemble)

			require.ErrorIs(t, fence.Rebase(ctx, db, "", "e1", "b", "a"), fence.ErrRebase)
			require.NoError(t, fence.Rebase(ctx, db, "", "e1", "b"))
			require.Equal(t, row{1, "e1"}, readRow(t, db, "b"))
		})
	}
}

// seedEras fences each resource with token 100 of its era.
func seedEras(t *testing.T, db *sql.DB, eras map[string]string) {
	t.Helper()
	for r, era := range eras {
		tx, err := db.BeginTx(t.Context(), nil)
		require.NoError(t, err)
		require.NoError(t, fence.CheckEra(t.Context(), tx, r, 100, era))
		require.NoError(t, tx.Commit())
	}
}

type row struct {
	token int64
	era   string
}

func readRow(t *testing.T, db *sql.DB, resource string) row {
	t.Helper()
	var r row
	require.NoError(t, db.QueryRowContext(context.Background(), "SELECT token, era FROM "+fence.DefaultTable+" WHERE resource = $1", resource).Scan(&r.token, &r.era))
	return r
}

// TestRebaseSQL runs RebaseSQL's statements on SQLite and PostgreSQL: a
// row of another era makes the UPDATE fail and change nothing; otherwise it
// does what Rebase does, and the SELECT shows the rows. Quotes in names are
// quoted.
func TestRebaseSQL(t *testing.T) {
	for _, b := range []backend{backends()[0], backends()[len(backends())-1]} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, true)
			ctx := t.Context()
			require.NoError(t, fence.Setup(ctx, db))
			seedEras(t, db, map[string]string{"a": "e1", "it's": "e1", "c": "e2"})
			run := func(script string) ([]string, error) {
				update, sel, ok := strings.Cut(strings.TrimSpace(script), ";\n")
				require.True(t, ok, script)
				if _, err := db.ExecContext(ctx, update); err != nil {
					return nil, err
				}
				rows, err := db.QueryContext(ctx, strings.TrimSuffix(sel, ";"))
				require.NoError(t, err)
				defer rows.Close()
				var out []string
				for rows.Next() {
					var r row
					var res string
					require.NoError(t, rows.Scan(&res, &r.token, &r.era))
					out = append(out, fmt.Sprintf("%s %d %s", res, r.token, r.era))
				}
				return out, rows.Err()
			}
			script, err := fence.RebaseSQL("e1", "e3", "a", "it's", "c")
			require.NoError(t, err)
			_, err = run(script)
			require.Error(t, err, "c is in era e2")
			require.Equal(t, row{100, "e1"}, readRow(t, db, "it's"), "nothing changed")
			script, err = fence.RebaseSQL("e1", "e3", "a", "it's")
			require.NoError(t, err)
			got, err := run(script)
			require.NoError(t, err)
			require.Equal(t, []string{"a 1 e3", "it's 1 e3"}, got)
		})
	}
	_, err := fence.RebaseSQL("e1", "e1", "a")
	require.ErrorIs(t, err, fence.ErrRebase)
	_, err = fence.RebaseSQL("e1", "e2")
	require.ErrorIs(t, err, fence.ErrInvalidArgument)
}
