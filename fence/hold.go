package fence

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
)

// A Holder is a lock hold with a fencing token: *zklock.Hold and
// *zklock.Leadership are Holders (for a *zklock.MultiHold, check each
// member's hold under its own resource).
type Holder interface {
	// Token returns the hold's fencing token.
	Token() int64
	// Context returns a context cancelled when the hold ends, with the
	// reason as its cause.
	Context() context.Context
}

// An EraHolder is a Holder that knows its ensemble's era:
// *zklock.Hold and *zklock.Leadership are EraHolders.
type EraHolder interface {
	Holder
	// Era returns the era of the ensemble that holds the hold's node.
	Era(ctx context.Context) (string, error)
}

// CheckHold is CheckEra with the hold's token and era (Check with its
// token, for a Holder that is not an EraHolder or whose ensemble has no era),
// after making sure the hold has
// not already ended: if it has, it returns an error wrapping ErrHoldEnded
// and the hold's reason (zklock.ErrLost, zklock.ErrReleased) without
// touching the database. A hold without a token (the non-exclusive hold of
// zklock.WithFailOpen) is refused with ErrInvalidArgument: it fences
// nothing.
//
// An era that cannot be read fails the check; if the hold has ended by
// then (the read failed because its session had), the error wraps
// ErrHoldEnded.
//
// The hold check only saves a doomed transaction. A hold can end just after
// it, unnoticed; the token check is what refuses the write then.
func (f *Fence) CheckHold(ctx context.Context, tx *sql.Tx, resource string, h Holder) error {
	if h == nil || isNilPointer(h) {
		return invalid("CheckHold needs a hold")
	}
	hc := h.Context()
	if hc == nil {
		return invalid("resource %q: the hold has no context", resource)
	}
	if hc.Err() != nil {
		return fmt.Errorf("%w: resource %q: %w", ErrHoldEnded, resource, context.Cause(hc))
	}
	token := h.Token()
	if token <= 0 {
		return invalid("resource %q: the hold has no fencing token (not exclusive)", resource)
	}
	eh, ok := h.(EraHolder)
	if !ok {
		return f.Check(ctx, tx, resource, token)
	}
	era, err := eh.Era(ctx)
	if err != nil {
		if hc.Err() != nil { // the read failed as the hold ended: say so
			return fmt.Errorf("%w: resource %q: %w", ErrHoldEnded, resource, context.Cause(hc))
		}
		return fmt.Errorf("fence: resource %q: the hold's ensemble era: %w", resource, err)
	}
	if era == "" { // an ensemble without an era (zklock.Session.Era): tokens alone
		return f.Check(ctx, tx, resource, token)
	}
	return f.CheckEra(ctx, tx, resource, token, era)
}

// CheckHold fences tx with h's token for resource in DefaultTable; see
// Fence.CheckHold.
func CheckHold(ctx context.Context, tx *sql.Tx, resource string, h Holder) error {
	return defaultFence.CheckHold(ctx, tx, resource, h)
}

// isNilPointer reports whether h is a typed nil pointer, whose methods
// would dereference it.
func isNilPointer(h Holder) bool {
	v := reflect.ValueOf(h)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
