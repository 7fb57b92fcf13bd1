package zklock

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the schedule of waits between retries of a ZooKeeper request
// that failed on a connection problem: capped exponential growth with full
// jitter. go-zookeeper already cycles through the servers on its own; the
// backoff only spaces out the library's retries of one request so that many
// waiters do not hammer a recovering ensemble in step.
type Backoff struct {
	// Base is the first wait's upper bound.
	Base time.Duration
	// Max caps every wait.
	Max time.Duration
}

// DefaultBackoff starts at 50ms and doubles up to 2s.
var DefaultBackoff = Backoff{Base: 50 * time.Millisecond, Max: 2 * time.Second}

// Delay returns the wait before retry number attempt (0 for the first retry):
// a uniformly random duration in [0, min(Max, Base<<attempt)].
// The jitter source is r; with r nil it uses the package's random source.
func (b Backoff) Delay(attempt int, r *rand.Rand) time.Duration {
	ceil := b.Ceiling(attempt)
	if ceil <= 0 {
		return 0
	}
	if r == nil {
		return rand.N(ceil + 1)
	}
	return time.Duration(r.Int64N(int64(ceil) + 1))
}

// Ceiling returns the largest wait Delay may return for attempt:
// min(Max, Base<<attempt), never negative.
func (b Backoff) Ceiling(attempt int) time.Duration {
	if b.Base <= 0 {
		return 0
	}
	ceil := b.Base
	for i := 0; i < attempt && ceil < b.Max; i++ {
		ceil *= 2
	}
	if b.Max > 0 && ceil > b.Max {
		ceil = b.Max
	}
	return ceil
}

// sleep waits for the backoff of attempt or until ctx ends.
func (b Backoff) sleep(ctx context.Context, attempt int) error {
	t := time.NewTimer(b.Delay(attempt, nil))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// wait sleeps for the backoff of attempt or until ctx ends, and returns the
// next attempt's number.
func (b Backoff) wait(ctx context.Context, attempt int) int {
	_ = b.sleep(ctx, attempt)
	return attempt + 1
}

// quitContext adapts a quit channel to a context for Backoff.sleep.
type quitContext struct{ quit <-chan struct{} }

func (q quitContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (q quitContext) Done() <-chan struct{}       { return q.quit }
func (q quitContext) Value(any) any               { return nil }
func (q quitContext) Err() error {
	select {
	case <-q.quit:
		return context.Canceled
	default:
		return nil
	}
}
