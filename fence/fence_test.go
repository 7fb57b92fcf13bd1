package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/fence"
)

// TestCheckContract checks Check's rule on every backend and isolation
// level, one committed transaction per step: the first token is accepted,
// an equal one passes, a greater one passes, a smaller one fails with
// ErrStale naming both tokens, and the stale transaction's own write rolls
// back with it.
func TestCheckContract(t *testing.T) {
	eachLevel(t, true, false, func(t *testing.T, b backend, db *sql.DB, opts *sql.TxOptions) {
		ctx := t.Context()
		require.NoError(t, fence.Setup(ctx, db))
		require.NoError(t, fence.Setup(ctx, db), "Setup again")
		_, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS results (resource TEXT, token BIGINT)")
		require.NoError(t, err)
		resource := t.Name()
		steps := []struct {
			token int64
			stale bool
		}{
			{token: 10},
			{token: 10},              // equal: the same holder writes again
			{token: 12},              // a later holder
			{token: 11, stale: true}, // an earlier holder, late
			{token: 10, stale: true},
			{token: 12},
		}
		for i, s := range steps {
			tx, err := db.BeginTx(ctx, opts)
			require.NoError(t, err)
			_, err = tx.ExecContext(ctx, "INSERT INTO results (resource, token) VALUES ($1, $2)", resource, s.token)
			require.NoError(t, err)
			err = fence.Check(ctx, tx, resource, s.token)
			if !s.stale {
				require.NoError(t, err, "step %d", i)
				require.NoError(t, tx.Commit())
				continue
			}
			require.ErrorIs(t, err, fence.ErrStale, "step %d", i)
			require.ErrorContains(t, err, fmt.Sprintf("stale token %d: token 12 already accepted", s.token))
			var se *fence.StaleError
			require.ErrorAs(t, err, &se)
			require.Equal(t, fence.StaleError{Resource: resource, Token: s.token, Accepted: 12}, *se)
			require.NoError(t, tx.Rollback())
		}
		var tokens []int64
		rows, err := db.QueryContext(ctx, "SELECT token FROM results WHERE resource = $1 ORDER BY token", resource)
		require.NoError(t, err)
		for rows.Next() {
			var tok int64
			require.NoError(t, rows.Scan(&tok))
			tokens = append(tokens, tok)
		}
		require.NoError(t, rows.Err())
		require.Equal(t, []int64{10, 10, 12, 12}, tokens, "the stale transactions' rows are absent")
		require.Equal(t, int64(12), accepted(t, db, fence.DefaultTable, resource))
	})
}

// TestCheckResourcesIndependent: a token accepted for one resource does
// not make another resource's smaller token stale, and several checks in
// one transaction commit together.
func TestCheckResourcesIndependent(t *testing.T) {
	eachLevel(t, true, false, func(t *testing.T, b backend, db *sql.DB, opts *sql.TxOptions) {
		ctx := t.Context()
		require.NoError(t, fence.Setup(ctx, db))
		a, c := t.Name()+"/a", t.Name()+"/c"
		tx, err := db.BeginTx(ctx, opts)
		require.NoError(t, err)
		require.NoError(t, fence.Check(ctx, tx, a, 100))
		require.NoError(t, fence.Check(ctx, tx, c, 3))
		require.NoError(t, fence.Check(ctx, tx, a, 100), "twice in one transaction")
		require.NoError(t, tx.Commit())
		require.Equal(t, int64(100), accepted(t, db, fence.DefaultTable, a))
		require.Equal(t, int64(3), accepted(t, db, fence.DefaultTable, c))
	})
}

// TestBadInput: every bad argument is an error wrapping
// ErrInvalidArgument, before any SQL runs; nothing panics.
func TestBadInput(t *testing.T) {
	ctx, db, tx := fencedTx(t)
	var nilCtx context.Context
	for _, c := range []struct {
		name string
		err  error
	}{
		{"nil tx", fence.Check(ctx, nil, "r", 1)},
		{"nil ctx", fence.Check(nilCtx, tx, "r", 1)},
		{"empty resource", fence.Check(ctx, tx, "", 1)},
		{"zero token", fence.Check(ctx, tx, "r", 0)},
		{"negative token", fence.Check(ctx, tx, "r", -5)},
		{"invalid UTF-8", fence.Check(ctx, tx, "r\xff", 1)},
		{"NUL", fence.Check(ctx, tx, "r\x00s", 1)},
		{"Setup nil db", fence.Setup(ctx, nil)},
		{"Setup nil ctx", fence.Setup(nilCtx, db)},
		{"CheckHold nil hold", fence.CheckHold(ctx, tx, "r", nil)},
		{"nil Fence", (*fence.Fence)(nil).Check(ctx, nil, "r", 1)},
	} {
		require.ErrorIs(t, c.err, fence.ErrInvalidArgument, c.name)
		require.ErrorContains(t, c.err, "fence: invalid argument: ", c.name)
	}
	for _, name := range []string{"", "Fence", "1abc", "a-b", "a;drop table x", "a.b.c", "a b", `"x"`,
		"a234567890123456789012345678901234567890123456789012345678901234"} {
		_, err := fence.New(fence.WithTable(name))
		require.ErrorIs(t, err, fence.ErrInvalidArgument, "table %q", name)
	}
	require.Equal(t, 0, rowCount(t, tx, fence.DefaultTable), "bad input wrote nothing")
}

// TestCheckErrors: database errors come back wrapped, naming the check.
func TestCheckErrors(t *testing.T) {
	db := backends()[0].open(t, true)
	ctx := t.Context()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	err = fence.Check(ctx, tx, "r", 1)
	require.ErrorContains(t, err, `fence: check resource "r" token 1 in zklock_fence: `, "no Setup: no table")
	require.NotErrorIs(t, err, fence.ErrStale)
	require.NoError(t, tx.Rollback())
	require.ErrorIs(t, fence.Check(ctx, tx, "r", 1), sql.ErrTxDone)

	_, err = db.ExecContext(ctx, "CREATE TABLE other (resource TEXT PRIMARY KEY, value TEXT)")
	require.NoError(t, err)
	f, err := fence.New(fence.WithTable("other"))
	require.NoError(t, err)
	require.ErrorContains(t, f.Setup(ctx, db), "fence: table other is not a fencing table")
}

// TestWithTable: a Fence on a table of its own (schema-qualified on
// PostgreSQL) keeps tokens apart from the default table's.
func TestWithTable(t *testing.T) {
	for _, b := range []backend{backends()[0], backends()[len(backends())-1]} {
		t.Run(b.name, func(t *testing.T) {
			db := b.open(t, true)
			ctx := t.Context()
			name := "main.jobs_fence"
			if b.name == "postgres" {
				name = "public.jobs_fence"
			}
			f, err := fence.New(fence.WithTable(name))
			require.NoError(t, err)
			require.Equal(t, name, f.Table())
			require.NoError(t, f.Setup(ctx, db))
			require.NoError(t, fence.Setup(ctx, db))
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			require.NoError(t, f.Check(ctx, tx, "r", 50))
			require.NoError(t, fence.Check(ctx, tx, "r", 2), "the default table has its own tokens")
			require.NoError(t, tx.Commit())
			require.Equal(t, int64(50), accepted(t, db, name, "r"))
			require.Equal(t, int64(2), accepted(t, db, fence.DefaultTable, "r"))
			require.Equal(t, fence.DefaultTable, (&fence.Fence{}).Table(), "the zero Fence")
		})
	}
}

// TestSetupConcurrent: processes starting together may all run Setup;
// each has its own connections (a *sql.DB of its own), and each round a
// table that does not exist yet.
func TestSetupConcurrent(t *testing.T) {
	for _, b := range backends() {
		if b.name == "sqlite-wal-immediate" || b.name == "sqlite-delete-immediate" {
			continue // _txlock applies to BeginTx only: the same as deferred here
		}
		t.Run(b.name, func(t *testing.T) {
			dsn := b.newDSN(t, true)
			dbs := make([]*sql.DB, 8)
			for i := range dbs { // not pinged: the first Setup makes the first connection
				db, err := sql.Open(b.driver, dsn)
				require.NoError(t, err)
				t.Cleanup(func() { db.Close() })
				dbs[i] = db
			}
			for round := range 5 {
				f, err := fence.New(fence.WithTable(fmt.Sprintf("setup_race_%d", round)))
				require.NoError(t, err)
				var wg sync.WaitGroup
				errs := make([]error, len(dbs))
				start := make(chan struct{})
				for i, db := range dbs {
					wg.Go(func() { <-start; errs[i] = f.Setup(t.Context(), db) })
				}
				close(start)
				wg.Wait()
				require.NoError(t, errors.Join(errs...), "round %d", round)
			}
		})
	}
}

func accepted(t *testing.T, db *sql.DB, table, resource string) int64 {
	t.Helper()
	var tok int64
	require.NoError(t, db.QueryRowContext(t.Context(), "SELECT token FROM "+table+" WHERE resource = $1", resource).Scan(&tok))
	return tok
}

// fencedTx opens a database with the fence's table set up and begins a
// transaction in it, rolled back when the test ends.
func fencedTx(t *testing.T) (context.Context, *sql.DB, *sql.Tx) {
	t.Helper()
	db := backends()[0].open(t, true)
	ctx := t.Context()
	require.NoError(t, fence.Setup(ctx, db))
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return ctx, db, tx
}

func rowCount(t *testing.T, tx *sql.Tx, table string) int {
	t.Helper()
	var n int
	require.NoError(t, tx.QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}
