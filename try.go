package zklock

// TryLock's refusal: one listing before anything is written, and an
// ErrLocked that leaves nothing behind where a node of ours would wait.

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// refuse lists q once and returns (and reports) ErrLocked if a node of ours
// would have to wait.
func (q *queue) refuse(ctx context.Context) error {
	children, err := q.s.list(ctx, q.dir)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil:
		if r := refused(err, accessList, q.dir, "the lock directory"); r != nil {
			err = r
			break
		}
		err = fmt.Errorf("zklock: list %s: %w", q.dir, err)
	default:
		cs := contenders(children, q.countAll)
		last := int32(0)
		if len(cs) > 0 {
			last = cs[len(cs)-1].seq
		}
		if holds, _ := q.decide(append(cs, contender{seq: last + 1, read: q.read}), len(cs)); holds {
			return nil
		}
		err = ErrLocked
	}
	q.refused(err)
	return err
}

// refused reports a try that found the lock taken before it wrote anything:
// an acquire that starts and fails at once.
func (q *queue) refused(err error) {
	if q.internal {
		return
	}
	id := acquires.Add(1)
	q.s.observe(Event{Kind: EventAcquiring, Acquire: id, Path: q.path})
	q.s.observe(Event{Kind: EventAcquireFailed, Acquire: id, Path: q.path, Err: err})
}
