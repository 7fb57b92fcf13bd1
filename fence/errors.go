package fence

import (
	"errors"
	"fmt"
)

var (
	// ErrStale is wrapped by the error Check returns when a greater token
	// was already accepted for the resource: the caller's lock has passed
	// to a later holder, and its transaction must not commit.
	ErrStale = errors.New("fence: stale token")

	// ErrInvalidArgument is wrapped by the errors for bad input: a nil
	// transaction, database or context, an empty resource name, a token
	// that is not positive, a table name that is not a plain identifier.
	ErrInvalidArgument = errors.New("fence: invalid argument")

	// ErrHoldEnded is wrapped by the error CheckHold returns when the hold
	// has already ended (lost or released); the error also wraps the
	// hold's own reason (zklock.ErrLost, zklock.ErrReleased).
	ErrHoldEnded = errors.New("fence: hold ended")
)

// A StaleError is the error Check returns for a stale token. It wraps
// ErrStale; use errors.Is(err, fence.ErrStale) to test for it and
// errors.As to read the tokens.
type StaleError struct {
	Resource string // the resource checked
	Token    int64  // the token presented
	Accepted int64  // the greater token the table has already accepted
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("fence: resource %q: stale token %d: token %d already accepted", e.Resource, e.Token, e.Accepted)
}

// Unwrap returns ErrStale.
func (e *StaleError) Unwrap() error { return ErrStale }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}
