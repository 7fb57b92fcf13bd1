package fence_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/zktest"
)

// TestIntegration_RebuiltEnsemble walks the rebuild procedure on a real
// ZooKeeper whose data directory is wiped, fencing SQLite and PostgreSQL
// at each step: the rebuilt ensemble's holder is refused with
// ErrOtherEnsemble (not ErrStale) naming both tokens and eras; Rebase
// refuses eras that are not the recorded and the new one; after it the new
// holder passes while a paused holder of the old ensemble, whose token is
// greater, is refused; deleting the era node makes later sessions a new
// era, refused in turn.
func TestIntegration_RebuiltEnsemble(t *testing.T) {
	c := zktest.Start(t)
	c.RequireFaults(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dbs := map[string]*sql.DB{}
	for _, b := range []backend{backends()[0], backends()[len(backends())-1]} {
		dbs[b.name] = b.open(t, true)
		require.NoError(t, fence.Setup(ctx, dbs[b.name]))
	}
	const resource = "/locks/report"
	// check fences a transaction with h on every database and returns the
	// errors, which must all match.
	check := func(h fence.Holder) error {
		t.Helper()
		var first error
		n := 0
		for name, db := range dbs {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			err = fence.CheckHold(ctx, tx, resource, h)
			if err == nil {
				require.NoError(t, tx.Commit())
			} else {
				require.NoError(t, tx.Rollback())
			}
			if n == 0 {
				first = err
			} else {
				require.Equal(t, first == nil, err == nil, name)
				if first != nil {
					require.Equal(t, first.Error(), err.Error(), name)
				}
			}
			n++
		}
		return first
	}
	connect := func() *zklock.Session {
		s, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()))
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		require.NoError(t, s.WaitConnected(ctx))
		return s
	}
	lock := func(s *zklock.Session) *zklock.Hold {
		m, err := zklock.NewMutex(s, resource)
		require.NoError(t, err)
		h, err := m.Lock(ctx)
		require.NoError(t, err)
		return h
	}

	// The old ensemble: a few holders, the last one pauses while it holds.
	old := connect()
	for range 3 {
		require.NoError(t, lock(old).Release())
	}
	a := lock(old)
	oldEra, err := a.Era(ctx)
	require.NoError(t, err)
	require.Regexp(t, "^[0-9a-f]{32}$", oldEra)
	require.NoError(t, check(a))
	paused := eraHolder{liveToken(a.Token()), oldEra} // what the paused process still believes

	require.NoError(t, c.Stop(0))
	require.NoError(t, os.RemoveAll(filepath.Join(c.DataDir(0), "data", "version-2")))
	require.NoError(t, c.Start(0))

	// The rebuilt ensemble: zxids start over, its era is new.
	cur := connect()
	b := lock(cur)
	newEra, err := b.Era(ctx)
	require.NoError(t, err)
	require.NotEqual(t, oldEra, newEra)
	require.Less(t, b.Token(), a.Token(), "the rebuilt ensemble's tokens start low")
	err = check(b)
	require.ErrorIs(t, err, fence.ErrOtherEnsemble)
	require.NotErrorIs(t, err, fence.ErrStale)
	var ee *fence.EnsembleError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, fence.EnsembleError{Resource: resource, Token: b.Token(), Era: newEra, Accepted: a.Token(), AcceptedEra: oldEra}, *ee)
	require.ErrorContains(t, err, "zklock fence rebase --from "+oldEra+" --to "+newEra+" "+resource)
	require.NoError(t, check(paused), "before the rebase the old ensemble's holder still passes")

	for name, db := range dbs {
		require.ErrorIs(t, fence.Rebase(ctx, db, newEra, newEra, resource), fence.ErrRebase, name)
		require.ErrorIs(t, fence.Rebase(ctx, db, newEra, oldEra, resource), fence.ErrRebase, name)
		require.NoError(t, fence.Rebase(ctx, db, oldEra, newEra, resource), name)
	}

	require.NoError(t, check(b), "the new ensemble's holder passes")
	for _, token := range []int64{paused.token, paused.token << 8, 1<<63 - 1} {
		err = check(eraHolder{liveToken(token), oldEra})
		require.ErrorIs(t, err, fence.ErrOtherEnsemble, "old holder, token %d", token)
	}
	require.Error(t, check(a), "the old hold itself (lost or not)")
	require.NoError(t, b.Release())
	next := lock(cur)
	require.Greater(t, next.Token(), b.Token())
	require.NoError(t, check(next))
	require.ErrorIs(t, check(eraHolder{liveToken(b.Token()), newEra}), fence.ErrStale, "within an era, tokens still order")

	// The era node deleted: sessions that start afterwards make a new era,
	// and the fence refuses them until an operator rebases.
	require.NoError(t, cur.Conn().Delete(zklock.EnsemblePath, -1))
	require.NoError(t, check(next), "a session keeps the era it read")
	later := connect()
	laterEra, err := later.Era(ctx)
	require.NoError(t, err)
	require.NotEqual(t, newEra, laterEra)
	require.NoError(t, next.Release())
	require.ErrorIs(t, check(lock(later)), fence.ErrOtherEnsemble)
}
