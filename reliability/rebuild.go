package reliability

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/fence"
)

// EnsembleRebuilt is S25: the ensemble is rebuilt from empty while holders
// write to the PostgreSQL register through fence.CheckEra. Contenders of
// the old ensemble write; one of them (P) writes, then stalls holding the
// lock; the server is wiped and started again (zxids start over, a new
// era); once P's hold is lost, contenders of the new ensemble write, and
// are refused as of another era until the operator's step, fence.Rebase
// from the old era to the new, which must refuse the same era on both
// sides (C7). After a new holder's write has committed, P writes late with
// its old token, greater than every new one: C2 judges the database across
// the rebuild, and must find no write of the old era after the new one's.
//
// N8 is the rebase that ignores eras: writes checked with tokens alone and
// the fence's token lowered by hand, which lets P's late write in.
func EnsembleRebuilt(ctx context.Context, e *Env) {
	naive := e.Sc.Negative == "N8"
	if naive && !NegativeBuild {
		e.T.Errorf("S25: negative control N8 needs -tags zklock_negative")
		return
	}
	db, err := sql.Open("pgx", e.pgDSN)
	if err != nil {
		e.T.Errorf("S25: %v", err)
		return
	}
	defer db.Close()
	r := &rebuildRun{e: e, db: db, mode: FenceEra}
	if naive {
		r.mode = FenceToken
	}
	phase := e.Sc.Duration / 6

	_, stopOld := r.contend(ctx, "a", 3)
	sleepCtx(ctx, phase)
	stopOld()
	p := r.newContender("p")
	h, err := p.lock(ctx, 1)
	if err != nil {
		return
	}
	oldEra, token := r.write(p, 1, h, 1)

	if !e.wipe(ctx, FaultRebuild) {
		return
	}
	select { // the old ensemble's holders learn their loss before new ones hold
	case <-h.Done():
	case <-time.After(3 * e.Sc.Session):
		e.contract("S25-setup", false, "the paused holder's hold was not lost after the rebuild")
	}
	r.refused.Store(0) // count the new ensemble's writes only
	r.committed.Store(0)
	news, stopNew := r.contend(ctx, "b", 3)
	defer stopNew()
	if !waitFor(ctx, &r.refused, 10*time.Second) {
		e.contract("S25-setup", false, "no write of the new ensemble was refused before the rebase")
	}
	newEra, err := news[0].s.Era(ctx)
	if err != nil {
		e.contract("S25-setup", false, "the new ensemble's era: %v", err)
		return
	}
	e.Fault(FaultRebase, "lock-0", 0, func() error { return r.rebase(ctx, oldEra, newEra) }, nil)
	if !waitFor(ctx, &r.committed, 10*time.Second) {
		e.contract("S25-setup", false, "no write of the new ensemble committed after the rebase")
	}
	r.writeAs(p, 1, h, 2, token, oldEra) // P wakes and writes with its old token
	e.Nem.Add(p.ev(KindRelease, 1))
	h.Release()
	<-ctx.Done()
}

// rebuildRun is S25's state: the database, the fence mode, and counters
// of the new ensemble's writes by outcome.
type rebuildRun struct {
	e                  *Env
	db                 *sql.DB
	mode               FenceMode
	refused, committed atomic.Int64
}

func (r *rebuildRun) newContender(name string) *inproc {
	c := r.e.contender(name)
	c.eras = true
	return c
}

// contend starts n contenders named prefix1..prefixn, each taking the lock
// and writing twice per hold until stop is called or ctx ends.
func (r *rebuildRun) contend(ctx context.Context, prefix string, n int) ([]*inproc, func()) {
	cctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	cs := make([]*inproc, n)
	for i := range cs {
		cs[i] = r.newContender(prefix + strconv.Itoa(i+1))
		wg.Go(func() {
			for op := int64(1); cctx.Err() == nil; op++ {
				h, err := cs[i].lock(cctx, op)
				if err != nil {
					continue
				}
				r.write(cs[i], op, h, 1)
				sleepCtx(cctx, 5*time.Millisecond)
				r.write(cs[i], op, h, 2)
				cs[i].release(op, h)
			}
		})
	}
	return cs, func() { cancel(); wg.Wait() }
}

// write makes write n of hold h of contender c with the hold's token and
// era, and returns them.
func (r *rebuildRun) write(c *inproc, op int64, h *zklock.Hold, n int) (string, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), r.e.Sc.Session)
	era, err := h.Era(ctx)
	cancel()
	if err != nil {
		return "", h.Token() // the hold's session ended before it read its era: it writes nothing
	}
	out := r.writeAs(c, op, h, n, h.Token(), era)
	switch out {
	case OutOtherEra, OutStale:
		r.refused.Add(1)
	case OutCommitted:
		r.committed.Add(1)
	}
	return era, h.Token()
}

// writeAs is one write to the register under token and era, logged as a
// worker's (pginvoke, pgwrite); it returns the outcome.
func (r *rebuildRun) writeAs(c *inproc, op int64, h *zklock.Hold, n int, token int64, era string) string {
	inv := c.ev(KindPGInvoke, op)
	inv.Token, inv.Era, inv.Elem = token, era, inv.HoldID()+"#"+strconv.Itoa(n)
	r.e.Nem.Add(inv)
	ctx, cancel := context.WithTimeout(context.Background(), PGTxTimeout)
	out, err := PGWrite(ctx, r.db, sql.LevelReadCommitted, regName(c.m.Path()), token, era, inv.Elem, r.mode)
	cancel()
	ev := c.ev(KindPGWrite, op)
	ev.T0, ev.Token, ev.Elem, ev.Out, ev.OK = inv.T, token, inv.Elem, out, out == OutCommitted
	if err != nil {
		ev.Err = err.Error()
	}
	r.e.Nem.Add(ev)
	return out
}

// rebase is the operator's step: fence.Rebase from the old era to the new,
// after checking that it refuses to move the resource onto its own era;
// with N8, the token lowered by hand, eras ignored.
func (r *rebuildRun) rebase(ctx context.Context, oldEra, newEra string) error {
	res := regName(LockPath(r.e.Root, 0))
	if r.mode == FenceToken {
		_, err := r.db.ExecContext(ctx, "UPDATE "+fence.DefaultTable+" SET token = 1 WHERE resource = $1", res)
		return err
	}
	err := fence.Rebase(ctx, r.db, oldEra, oldEra, res)
	r.e.contract("S25-rebase-guard", errors.Is(err, fence.ErrRebase), "Rebase onto the recorded era: %v", err)
	return fence.Rebase(ctx, r.db, oldEra, newEra, res)
}

// waitFor waits until n is positive, ctx ends or d passes, and reports
// whether n is positive.
func waitFor(ctx context.Context, n *atomic.Int64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for n.Load() == 0 && ctx.Err() == nil && time.Now().Before(deadline) {
		sleepCtx(ctx, 10*time.Millisecond)
	}
	return n.Load() > 0
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
