package reliability

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/pgtest"
)

// pgHolds makes holds of worker "t" whose writes go to the PostgreSQL
// register of db through the worker's own code (clientOp.pgWrite), logging
// to log.
type pgHolds struct {
	db  *sql.DB
	log *Log
}

// hold returns hold t/<client>/<op> of lock-<lock> with token, its ok event
// logged; negative "N7" leaves fence.Check out of its writes.
func (p pgHolds) hold(client int, op int64, lock int, token int64, negative string) *clientOp {
	base := Event{Worker: "t", Client: client, Op: op, Lock: LockPath("/t", lock)}
	ok := base
	ok.Kind, ok.Token = KindOK, token
	p.log.Add(ok)
	return &clientOp{cfg: WorkerConfig{Negative: negative}, log: p.log, out: sinks{pg: p.db}, base: base, res: fmt.Sprintf("lock-%d", lock)}
}

// judgeDB reads the database after the writes logged in wlog and returns
// the verdict of C2's database checks and the outcome counts.
func judgeDB(t *testing.T, db *sql.DB, wlog string) ([]Violation, map[string]int) {
	t.Helper()
	rlog := filepath.Join(t.TempDir(), "database.jsonl")
	log, err := CreateLog(rlog)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, ReadPG(ctx, db, log))
	require.NoError(t, log.Close())
	evs, err := ReadFiles(wlog, rlog)
	require.NoError(t, err)
	h := Analyze(evs)
	return CheckDatabase(h), DatabaseOutcomes(h)
}

func openPGRegister(t *testing.T) (*sql.DB, pgHolds, string) {
	t.Helper()
	db, err := sql.Open("pgx", pgtest.Shared(t).NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, PGSetup(ctx, db, []string{"lock-0", "lock-1"}))
	wlog := filepath.Join(t.TempDir(), "t.jsonl")
	log, err := CreateLog(wlog)
	require.NoError(t, err)
	t.Cleanup(func() { log.Close() })
	return db, pgHolds{db, log}, wlog
}

// TestIntegration_PGRegister: on a real PostgreSQL, the fence refuses a
// stale holder's write and passes an equal token, C2 accepts the database
// that results, and catches the stale row that a write without fence.Check
// (N7) commits.
func TestIntegration_PGRegister(t *testing.T) {
	db, p, wlog := openPGRegister(t)
	a := p.hold(1, 1, 0, 5, "")
	b := p.hold(1, 2, 0, 7, "")
	a.pgWrite(5)
	b.pgWrite(7)
	a.pgWrite(5) // the resumed stale holder
	b.pgWrite(7) // the same holder again
	require.NoError(t, p.log.Flush())
	vs, outs := judgeDB(t, db, wlog)
	require.Empty(t, vs)
	require.Equal(t, map[string]int{OutCommitted: 3, OutStale: 1, "rows": 3}, outs)

	p.hold(1, 3, 0, 5, "N7").pgWrite(5) // without the fence
	require.NoError(t, p.log.Flush())
	vs, outs = judgeDB(t, db, wlog)
	require.Len(t, vs, 1, "%v", vs)
	require.Contains(t, vs[0].Detail, "lock-0: token 5 (t/1/3#1) committed at place 4 after token 7 (t/1/2#1)")
	require.Equal(t, 4, outs["rows"])
}

// TestIntegration_PGRegisterRacing: three holders of increasing tokens
// write at once, at read committed, repeatable read and serializable, round
// after round; whatever commits, the database's commit order never has a
// smaller token after a greater one, and every outcome agrees with the
// rows.
func TestIntegration_PGRegisterRacing(t *testing.T) {
	db, p, wlog := openPGRegister(t)
	for r := range int64(30) {
		var wg sync.WaitGroup
		for c := range 3 {
			tok := 10 + 3*r + int64(c)
			w := p.hold(c, r+1, 1, tok, "")
			wg.Go(func() { w.pgWrite(tok) })
		}
		wg.Wait()
	}
	require.NoError(t, p.log.Flush())
	vs, outs := judgeDB(t, db, wlog)
	require.Empty(t, vs)
	require.Positive(t, outs["rows"])
	require.Equal(t, outs[OutCommitted], outs["rows"], "%v", outs)
	t.Logf("outcomes: %v", outs)
}

func TestCommitOutcome(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&pgconn.PgError{Code: "40001"}, OutError}, // serialization failure: rolled back
		{fmt.Errorf("commit: %w", &pgconn.PgError{Code: "40P01"}), OutError},
		{&pgconn.PgError{Code: "23505"}, OutError}, // a deferred unique constraint
		{pgx.ErrTxCommitRollback, OutError},
		{&pgconn.PgError{Code: "57P01", Severity: "FATAL"}, OutUnknown}, // terminated: maybe after the commit
		{io.ErrUnexpectedEOF, OutUnknown},
		{context.DeadlineExceeded, OutUnknown},
		{errors.New("driver: bad connection"), OutUnknown},
	} {
		require.Equal(t, c.want, commitOutcome(c.err), "%v", c.err)
	}
}
