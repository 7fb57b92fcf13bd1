// Package fence makes a database refuse the writes of a lock holder whose
// lock has passed to someone else: the resource side of zklock's fencing
// tokens, on database/sql.
//
// A lock cannot stop its holder from writing after it lost the lock: the
// process may pause (a GC pause, swapping, SIGSTOP) between checking its hold
// and writing, and wake up after its session expired and the next holder
// wrote. The database can: each hold's Token is greater than every earlier
// holder's on that lock, so a table that remembers the greatest token it has
// accepted for each resource can refuse a smaller one. Check does that inside
// the caller's own transaction, so the caller's writes commit only together
// with an accepted token:
//
//	tx, err := db.BeginTx(ctx, nil)
//	...
//	defer tx.Rollback()
//	if err := fence.CheckHold(ctx, tx, "reports", hold); err != nil {
//		return err // fence.ErrStale: a later holder has written; nothing of ours commits
//	}
//	// ... the transaction's own writes ...
//	return tx.Commit()
//
// Setup creates the table (DefaultTable, or the one named with WithTable).
// It works on PostgreSQL and on SQLite (3.35 or later: it needs UPSERT and
// RETURNING), at every isolation level each offers; the package imports no
// driver. Drivers that take $1-style placeholders work; it is tested with
// github.com/jackc/pgx/v5/stdlib and modernc.org/sqlite.
//
// A fence protects only the writes made in a transaction that checked it: a
// write outside such a transaction, or one to a database other than the
// fence's, is not fenced.
//
// Caution: Check locks the resource's row until the transaction ends, so a
// holder paused inside a fenced transaction holds up the next holder's
// Check (its late commit is still safe: it is ordered before the next
// holder's). On PostgreSQL, bound that with idle_in_transaction_session_timeout
// on the writers' role, or lock_timeout on the next holder's transaction.
package fence
