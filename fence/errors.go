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

// ErrOtherEnsemble is wrapped by the error CheckEra and CheckHold return
// for a token of another ensemble era than the one the resource has
// recorded (see EnsembleError), and ErrRebase by the errors of Rebase.
var (
	ErrOtherEnsemble = errors.New("fence: token of another ensemble era")
	ErrRebase        = errors.New("fence: rebase refused")
)

// An EnsembleError is the error CheckEra returns for a token of another
// era of the ensemble (see zklock.EnsemblePath) than the resource's: either
// the ensemble was rebuilt and the resource not yet rebased onto the new
// era, or the token comes from an ensemble the resource has left. Tokens of
// different eras are not comparable, so it is refused whatever its value.
// It wraps ErrOtherEnsemble.
type EnsembleError struct {
	Resource    string // the resource checked
	Token       int64  // the token presented
	Era         string // its era; "" for Check, which has none
	Accepted    int64  // the greatest token accepted in the recorded era
	AcceptedEra string // the recorded era
}

func (e *EnsembleError) Error() string {
	if e.Era == "" {
		return fmt.Sprintf("fence: resource %q: token %d has no ensemble era, and the resource is fenced in era %s"+
			" (token %d accepted): check with CheckEra or CheckHold", e.Resource, e.Token, e.AcceptedEra, e.Accepted)
	}
	return fmt.Sprintf("fence: resource %q: token %d is of ensemble era %s, token %d accepted is of era %s:"+
		" if the ensemble was rebuilt, move the resource to the new era"+
		" (zklock fence rebase --from %s --to %s %s); otherwise this holder's ensemble is no longer the resource's",
		e.Resource, e.Token, e.Era, e.Accepted, e.AcceptedEra, e.AcceptedEra, e.Era, e.Resource)
}

// Unwrap returns ErrOtherEnsemble.
func (e *EnsembleError) Unwrap() error { return ErrOtherEnsemble }
