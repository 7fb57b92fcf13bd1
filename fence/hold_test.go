package fence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
	"github.com/zklock/zklock/zktest"
)

// Every recipe's hold is a Holder: a *Hold (Mutex, RWLock halves,
// Semaphore leases, LeaderLatch terms, Campaign) and a LeaderElection's
// *Leadership.
var (
	_ fence.EraHolder = (*zklock.Hold)(nil)
	_ fence.EraHolder = (*zklock.Leadership)(nil)
)

// TestIntegration_CheckHold fences with real zklock holds on a real
// ZooKeeper: a mutex's hold and a leader's term are checked with their
// tokens; a released hold is refused without touching the database, with
// ErrHoldEnded and zklock's own reason; a later holder's token makes the
// earlier one stale.
func TestIntegration_CheckHold(t *testing.T) {
	c := zktest.Start(t)
	sess, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()))
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	db := backends()[0].open(t, true)
	require.NoError(t, fence.Setup(ctx, db))
	check := func(h fence.Holder) error {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer tx.Rollback()
		if err := fence.CheckHold(ctx, tx, "/locks/report", h); err != nil {
			return err
		}
		return tx.Commit()
	}

	m, err := zklock.NewMutex(sess, "/locks/report")
	require.NoError(t, err)
	first, err := m.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, check(first))
	require.NoError(t, check(first), "the same hold again")
	require.NoError(t, first.Release())
	err = check(first)
	require.ErrorIs(t, err, fence.ErrHoldEnded)
	require.ErrorIs(t, err, zklock.ErrReleased)

	second, err := m.Lock(ctx)
	require.NoError(t, err)
	require.Greater(t, second.Token(), first.Token())
	require.NoError(t, check(second))
	require.NoError(t, second.Release())

	e, err := zklock.NewLeaderElection(sess, "/locks/report", "leader-1")
	require.NoError(t, err)
	var term int64
	require.NoError(t, e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		term = l.Token()
		return check(l)
	}))
	require.Greater(t, term, second.Token())

	// The first hold's token, presented as if it were still live, is stale.
	era, err := sess.Era(ctx)
	require.NoError(t, err)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback()
	err = fence.CheckHold(ctx, tx, "/locks/report", eraHolder{liveToken(first.Token()), era})
	require.ErrorIs(t, err, fence.ErrStale)
	var se *fence.StaleError
	require.ErrorAs(t, err, &se)
	require.Equal(t, term, se.Accepted)
}

// TestCheckHoldBadHolds: a nil or typed-nil hold, a hold without a token
// (WithFailOpen's stand-in has none) or without a context is refused with
// ErrInvalidArgument, never a panic.
func TestCheckHoldBadHolds(t *testing.T) {
	ctx, _, tx := fencedTx(t)
	for name, h := range map[string]fence.Holder{
		"nil":             nil,
		"nil *Hold":       (*zklock.Hold)(nil),
		"nil *Leadership": (*zklock.Leadership)(nil),
		"no token":        liveToken(0),
		"no context":      holder{token: 3},
		"negative token":  liveToken(-1),
	} {
		require.ErrorIs(t, fence.CheckHold(ctx, tx, "r", h), fence.ErrInvalidArgument, name)
	}
	ended, cancel := context.WithCancelCause(ctx)
	cancel(zklock.ErrSessionExpired)
	err := fence.CheckHold(ctx, tx, "r", holder{token: 3, ctx: ended})
	require.ErrorIs(t, err, fence.ErrHoldEnded)
	require.ErrorIs(t, err, zklock.ErrSessionExpired)
	require.Equal(t, 0, rowCount(t, tx, fence.DefaultTable))
}

// holder is a Holder made of a token and a context: for the cases a real
// hold cannot be brought into cheaply.
type holder struct {
	token int64
	ctx   context.Context
}

func (h holder) Token() int64             { return h.token }
func (h holder) Context() context.Context { return h.ctx }

func liveToken(token int64) holder { return holder{token: token, ctx: context.Background()} }

// eraHolder is a holder with an ensemble era: a hold as a paused process
// still believes it to be.
type eraHolder struct {
	holder
	era string
}

func (h eraHolder) Era(context.Context) (string, error) { return h.era, nil }

// endingHolder is a hold whose era read fails because its session ended:
// the hold's loss arrives while the read is under way.
type endingHolder struct {
	holder
	end context.CancelCauseFunc
}

func (h endingHolder) Era(context.Context) (string, error) {
	h.end(zklock.ErrSessionExpired)
	return "", errors.New("zk: connection closed")
}

// An era read that fails as the hold ends reports the hold's end, as the
// check before it would have; one that fails on a live hold reports the
// read.
func TestCheckHoldEraReadFails(t *testing.T) {
	ctx, _, tx := fencedTx(t)
	hc, end := context.WithCancelCause(ctx)
	err := fence.CheckHold(ctx, tx, "r", endingHolder{holder{token: 3, ctx: hc}, end})
	require.ErrorIs(t, err, fence.ErrHoldEnded)
	require.ErrorIs(t, err, zklock.ErrSessionExpired)

	err = fence.CheckHold(ctx, tx, "r", endingHolder{liveToken(3), func(error) {}})
	require.NotErrorIs(t, err, fence.ErrHoldEnded)
	require.ErrorContains(t, err, "the hold's ensemble era: zk: connection closed")
	require.Equal(t, 0, rowCount(t, tx, fence.DefaultTable))
}

// A hold whose ensemble has no era (zklock.Session.Era gave "": a locked-
// down root) is checked by its token alone; once a resource is bound to an
// era, such a check is refused like any token-only one.
func TestCheckHoldWithoutEra(t *testing.T) {
	db := backends()[0].open(t, true)
	ctx := t.Context()
	require.NoError(t, fence.Setup(ctx, db))
	check := func(resource string, h fence.Holder) error {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer tx.Rollback()
		if err := fence.CheckHold(ctx, tx, resource, h); err != nil {
			return err
		}
		return tx.Commit()
	}
	require.NoError(t, check("plain", eraHolder{liveToken(5), ""}))
	require.ErrorIs(t, check("plain", eraHolder{liveToken(4), ""}), fence.ErrStale)
	require.NoError(t, check("bound", eraHolder{liveToken(5), "e1"}))
	require.Error(t, check("bound", eraHolder{liveToken(9), ""}), "a bound resource refuses a token without its era")
}
