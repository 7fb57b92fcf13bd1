package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/fence"
)

// raceRounds is how many times two holders race on one resource, per
// backend and isolation level, under the race detector too (which slows
// SQLite, C translated to Go, about tenfold: some 40 s in all).
var raceRounds = 1000

// outcome is how one racing transaction ended.
type outcome struct {
	committed bool
	stale     error // Check's ErrStale
	failed    error // any other error: a serialization failure, a busy database
}

// TestRaceNeverCommitsStaleLast races two transactions on one resource,
// round after round, on every backend and isolation level: the holder of
// token 5 (an earlier lock holder, late) and the holder of token 7 (the
// current one). Each reads, checks its token, writes its token into a
// plain last-writer-wins register, and commits. Judged from the database's
// own rows and each transaction's outcome: whenever 7 committed, the
// register and the fence hold 7 (5 did not commit after it); 7 is never
// stale; a stale 5 names both tokens; at least one of the two commits.
// Failing the loser (serialization failure, busy) is allowed. Commits do
// not wait for the disk here (see backend.open): the race is about what
// transactions see of each other, not about surviving a power cut. SQLite
// runs at one level: its driver begins every transaction the same way.
func TestRaceNeverCommitsStaleLast(t *testing.T) {
	eachLevel(t, false, true, func(t *testing.T, b backend, db *sql.DB, opts *sql.TxOptions) {
		ctx := t.Context()
		require.NoError(t, fence.Setup(ctx, db))
		_, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS register (resource TEXT PRIMARY KEY, token BIGINT NOT NULL)")
		require.NoError(t, err)
		db.SetMaxIdleConns(2)
		prefix := t.Name() + "/"
		outcomes := make([][2]outcome, raceRounds)
		for r := range raceRounds {
			outcomes[r] = raceOnce(ctx, db, opts, b.lockAtBegin, fmt.Sprintf("%s%d", prefix, r), r%2 == 0)
		}

		fenced := tokensByResource(t, db, fence.DefaultTable, prefix)
		register := tokensByResource(t, db, "register", prefix)
		var counts struct{ both, staleLoser, failedLoser, fiveOnly int }
		for r, o := range outcomes {
			res := fmt.Sprintf("%s%d", prefix, r)
			five, seven := o[0], o[1]
			require.NoError(t, seven.stale, "round %d: 7 is the greatest token", r)
			require.True(t, five.committed || seven.committed, "round %d: neither committed: 5 %+v, 7 %+v", r, five, seven)
			if five.stale != nil {
				require.ErrorContains(t, five.stale, "stale token 5: token 7 already accepted", "round %d", r)
			}
			switch {
			case seven.committed:
				require.Equal(t, int64(7), register[res], "round %d: 5 committed after 7 (5 %+v)", r, five)
				require.Equal(t, int64(7), fenced[res], "round %d", r)
				switch {
				case five.committed:
					counts.both++
				case five.stale != nil:
					counts.staleLoser++
				default:
					counts.failedLoser++
				}
			default:
				require.Equal(t, int64(5), register[res], "round %d", r)
				require.Equal(t, int64(5), fenced[res], "round %d", r)
				counts.fiveOnly++
			}
		}
		t.Logf("%d rounds: both committed (5 first) %d, 7 won and 5 was stale %d, 7 won and 5 failed %d, only 5 committed %d",
			raceRounds, counts.both, counts.staleLoser, counts.failedLoser, counts.fiveOnly)
	})
}

// raceOnce runs the two transactions of one round on resource and returns
// the outcomes of 5's and 7's. Both start together: after their first read
// (so both hold a snapshot), or before BEGIN where BEGIN takes the write
// lock.
func raceOnce(ctx context.Context, db *sql.DB, opts *sql.TxOptions, lockAtBegin bool, resource string, sevenFirst bool) [2]outcome {
	ready := make(chan struct{}, 2)
	start := make(chan struct{})
	results := make(chan struct {
		i int
		o outcome
	}, 2)
	run := func(i int, token int64) {
		o := func() (o outcome) {
			barrier := func() { ready <- struct{}{}; <-start }
			if lockAtBegin {
				barrier()
			}
			tx, err := db.BeginTx(ctx, opts)
			if err != nil {
				if !lockAtBegin {
					barrier()
				}
				return outcome{failed: err}
			}
			defer tx.Rollback()
			var n int
			err = tx.QueryRowContext(ctx, "SELECT count(*) FROM register WHERE resource = $1", resource).Scan(&n)
			if !lockAtBegin {
				barrier()
			}
			if err != nil {
				return outcome{failed: err}
			}
			if err := fence.Check(ctx, tx, resource, token); errors.Is(err, fence.ErrStale) {
				return outcome{stale: err}
			} else if err != nil {
				return outcome{failed: err}
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO register (resource, token) VALUES ($1, $2)"+
				" ON CONFLICT (resource) DO UPDATE SET token = excluded.token", resource, token); err != nil {
				return outcome{failed: err}
			}
			if err := tx.Commit(); err != nil {
				return outcome{failed: err}
			}
			return outcome{committed: true}
		}()
		results <- struct {
			i int
			o outcome
		}{i, o}
	}
	if sevenFirst {
		go run(1, 7)
		go run(0, 5)
	} else {
		go run(0, 5)
		go run(1, 7)
	}
	<-ready
	<-ready
	close(start)
	var out [2]outcome
	for range 2 {
		r := <-results
		out[r.i] = r.o
	}
	return out
}

func tokensByResource(t *testing.T, db *sql.DB, table, prefix string) map[string]int64 {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "SELECT resource, token FROM "+table+" WHERE resource LIKE $1", prefix+"%")
	require.NoError(t, err)
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var res string
		var tok int64
		require.NoError(t, rows.Scan(&res, &tok))
		m[res] = tok
	}
	require.NoError(t, rows.Err())
	return m
}
