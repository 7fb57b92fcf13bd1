package reliability

import (
	"context"
	"database/sql"
	"strconv"
)

// pgIsolation is the isolation level of client c's transactions on the
// PostgreSQL register: the clients of a worker take read committed,
// repeatable read and serializable in turn, so that the fence is judged at
// each.
func pgIsolation(c int) sql.IsolationLevel {
	return [...]sql.IsolationLevel{sql.LevelReadCommitted, sql.LevelRepeatableRead, sql.LevelSerializable}[c%3]
}

// pgWrite makes one write to the PostgreSQL register under token (PGWrite;
// N7 leaves fence.Check out): a pginvoke event, on disk before the
// transaction begins, and a pgwrite event with the outcome the worker saw.
// The transaction has its own deadline, PGTxTimeout, not the run's, so
// that a holder's last write as the run ends is made like any other.
func (w *clientOp) pgWrite(token int64) {
	w.n++
	elem := w.base.HoldID() + "#" + strconv.Itoa(w.n)
	t0 := Mono()
	w.add(KindPGInvoke, func(e *Event) { e.T, e.Token, e.Elem = t0, token, elem })
	w.log.Flush() // an effect of a SIGKILLed worker is never without its invoke
	ctx, cancel := context.WithTimeout(context.Background(), PGTxTimeout)
	mode := FenceToken
	if w.cfg.Negative == "N7" {
		mode = FenceOff
	}
	out, err := PGWrite(ctx, w.out.pg, pgIsolation(w.base.Client), w.res, token, "", elem, mode)
	cancel()
	w.add(KindPGWrite, func(e *Event) {
		e.T0, e.Token, e.Elem, e.Out, e.OK = t0, token, elem, out, out == OutCommitted
		if err != nil {
			e.Err = err.Error()
		}
	})
}
