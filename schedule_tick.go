package zklock

import (
	"fmt"
	"time"
)

// MissedTicks is what a Schedule does about ticks whose time passed
// without a claim: while no one led, or while the leader's previous job
// still ran. See WithMissed.
type MissedTicks int

const (
	// RunLatest runs the latest missed tick at once, late (Tick.Late), and
	// counts the earlier ones as missed (Tick.Missed). The default: most
	// periodic jobs catch up on what accumulated (clean-ups, syncs,
	// reports), so one late run is better than a whole period skipped.
	RunLatest MissedTicks = iota
	// Skip runs no missed tick: the schedule waits for the next one, and
	// counts the skipped ones in its claim (Tick.Missed). For jobs whose
	// tick means nothing once it is past.
	Skip
)

func (m MissedTicks) String() string {
	switch m {
	case RunLatest:
		return "run-latest"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("MissedTicks(%d)", int(m))
}

// ParseMissedTicks reads "run-latest" or "skip".
func ParseMissedTicks(s string) (MissedTicks, error) {
	switch s {
	case "run-latest":
		return RunLatest, nil
	case "skip":
		return Skip, nil
	}
	return 0, fmt.Errorf("%w: missed-tick policy %q (run-latest or skip)", ErrInvalidArgument, s)
}

// The bounds of a Schedule's period. Claims are named by the millisecond,
// so the period and the offset are whole milliseconds.
const (
	MinTickPeriod = 100 * time.Millisecond
	MaxTickPeriod = 366 * 24 * time.Hour
)

// checkPeriod validates a schedule's period and offset.
func checkPeriod(every, offset time.Duration) error {
	switch {
	case every < MinTickPeriod || every > MaxTickPeriod:
		return fmt.Errorf("%w: schedule period %v outside [%v, %v]", ErrInvalidArgument, every, MinTickPeriod, MaxTickPeriod)
	case every%time.Millisecond != 0 || offset%time.Millisecond != 0:
		return fmt.Errorf("%w: schedule period %v and offset %v must be whole milliseconds", ErrInvalidArgument, every, offset)
	case offset < 0 || offset >= every:
		return fmt.Errorf("%w: schedule offset %v outside [0, %v)", ErrInvalidArgument, offset, every)
	}
	return nil
}

// tickAt returns the latest tick at or before now: the wall-clock instant
// floor((now-offset)/every)*every + offset, counted from the Unix epoch,
// truncated to the millisecond (ticks are named by their Unix millisecond).
func tickAt(now time.Time, every, offset time.Duration) time.Time {
	e, o := every.Milliseconds(), offset.Milliseconds()
	ms := now.UnixMilli() - o
	q := ms / e
	if ms%e < 0 { // floor, not truncation, before the epoch
		q--
	}
	return time.UnixMilli(q*e + o).UTC()
}

// dueGrace is how long after its time a tick is due rather than missed: a
// tenth of the period, at most a second. A leader that wakes up a little
// after the tick it waited for, or that takes over just after a tick,
// runs it on time under either policy.
func dueGrace(every time.Duration) time.Duration { return min(every/10, time.Second) }

// tickPlan is what a leader does next.
type tickPlan struct {
	Tick   time.Time // the tick to claim, at Tick (now or later)
	Late   bool      // Tick's time passed more than dueGrace ago: a missed tick run late (RunLatest)
	Missed int       // ticks after the latest claim and before Tick that will never run
}

// planTick decides the next tick to claim at now, given the latest claimed
// tick (zero if the schedule has no claim) and the missed-tick policy. It
// reads no clock. With no claim at all no tick counts as missed: a new
// schedule starts at its first due tick.
func planTick(now, last time.Time, every, offset time.Duration, policy MissedTicks) tickPlan {
	cur := tickAt(now, every, offset)
	due := now.Before(cur.Add(dueGrace(every)))
	switch {
	case last.IsZero():
		if due {
			return tickPlan{Tick: cur}
		}
		return tickPlan{Tick: cur.Add(every)}
	case !cur.After(last):
		// Claimed already (or the clock stepped back): the next one after it.
		return tickPlan{Tick: last.Add(every)}
	}
	between := int((cur.Sub(last) / every) - 1) // unclaimed ticks strictly between last and cur
	switch {
	case due:
		return tickPlan{Tick: cur, Missed: between}
	case policy == RunLatest:
		return tickPlan{Tick: cur, Late: true, Missed: between}
	}
	return tickPlan{Tick: cur.Add(every), Missed: between + 1}
}
