package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // "sqlite"

	"github.com/zklock/zklock/fence"
)

// zklock fence era prints the era a library session reads; fence rebase
// prints SQL only onto that era, from another named explicitly, and the SQL
// moves the rows on SQLite; every other form is a usage error (exit 2).
func TestIntegration_Fence(t *testing.T) {
	c, _, env := zkSetup(t)
	code, stdout, stderr := runZklock(t, env, "fence", "era")
	require.Equal(t, exitOK, code, stderr)
	era := strings.TrimSpace(stdout)
	require.Regexp(t, "^[0-9a-f]{32}$", era)
	libEra, err := session(t, c).Era(t.Context())
	require.NoError(t, err)
	require.Equal(t, libEra, era)

	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "app.db"))
	require.NoError(t, err)
	defer db.Close()
	ctx := t.Context()
	require.NoError(t, fence.Setup(ctx, db))
	for _, r := range []string{"reports", "ledger"} {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		require.NoError(t, fence.CheckEra(ctx, tx, r, 1<<33, "0ld"))
		require.NoError(t, tx.Commit())
	}
	code, stdout, stderr = runZklock(t, env, "fence", "rebase", "--from", "0ld", "--to", era, "reports", "ledger")
	require.Equal(t, exitOK, code, stderr)
	update, _, ok := strings.Cut(stdout, ";\n")
	require.True(t, ok, stdout)
	_, err = db.ExecContext(ctx, update)
	require.NoError(t, err)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	require.NoError(t, fence.CheckEra(ctx, tx, "reports", 5, era), "the new ensemble's low token passes")
	require.ErrorIs(t, fence.CheckEra(ctx, tx, "ledger", 1<<40, "0ld"), fence.ErrOtherEnsemble)

	for _, args := range [][]string{
		{"fence"},
		{"fence", "bogus"},
		{"fence", "era", "extra"},
		{"fence", "rebase", "reports"},                             // no eras
		{"fence", "rebase", "--to", era, "reports"},                // no --from
		{"fence", "rebase", "--from", "0ld", "--to", era},          // no resource
		{"fence", "rebase", "--from", era, "--to", era, "reports"}, // the same era
		{"fence", "rebase", "--from", "0ld", "--to", "other", "r"}, // not the ensemble's era
		{"fence", "rebase", "--from", "0ld", "--to", "a b", "r"},   // not an era
		{"fence", "rebase", "--from", "0ld", "--to", era, "--table", "x;y", "r"},
	} {
		code, stdout, stderr := runZklock(t, env, args...)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr)
		require.Empty(t, stdout, "%v", args)
	}
	code, stdout, stderr = runZklock(t, env, "fence", "rebase", "--from", "", "--to", era, "reports")
	require.Equal(t, exitOK, code, "an explicit empty --from names rows written before eras: %s", stderr)
	require.Contains(t, stdout, "WHEN era = '' THEN")
}
