package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// A Schedule runs a job once per tick of the wall clock on whichever
// participant leads: a LeaderElection at PATH/leader (Curator's
// LeaderSelector on the wire) whose leader claims each tick before it runs
// it. Ticks are aligned to the Unix epoch: the instants n*every + offset
// (WithOffset), so every participant, whenever it started, agrees on them.
//
// A tick runs at most once, across failovers, restarts and paused leaders:
// the leader claims it with one ZooKeeper multi that checks its own
// election node and creates the tick's claim node PATH/ticks/<unix-ms>, so
// a second claim, or a deposed leader's, fails. A tick passed without a
// claim is missed (WithMissed). The leader keeps the newest claims
// (WithHistory); ScheduleHistory reads them. The format, and why paused
// leaders and skewed clocks cannot run a tick twice, are in
// docs/protocol.md#scheduled-ticks.
//
// As with LeaderElection, the session should use WithLossLimit(0). A
// Schedule is safe for concurrent use; Run runs once at a time.
type Schedule struct {
	s     *Session
	path  string
	every time.Duration
	cfg   scheduleConfig
	e     *LeaderElection
}

// ScheduleOption configures NewSchedule.
type ScheduleOption func(*scheduleConfig)

type scheduleConfig struct {
	offset time.Duration
	missed MissedTicks
	keep   int
	id     string
	acl    []zk.ACL
}

// Bounds of WithHistory.
const (
	DefaultTickHistory = 100
	MaxTickHistory     = 10000
)

// WithOffset moves the ticks offset after the period's boundaries: with
// every 1h and offset 5m, ticks are at five past each hour (UTC). 0 <=
// offset < every, whole milliseconds. Default: 0.
func WithOffset(d time.Duration) ScheduleOption {
	return func(c *scheduleConfig) { c.offset = d }
}

// WithMissed sets what is done about missed ticks. Default: RunLatest,
// which runs the latest missed tick late and counts the earlier ones as
// missed. A tick less than a tenth of the period (at most a second) past
// is due, not missed, under either policy. A schedule with no claim at all
// has missed nothing: it starts at its first due tick.
func WithMissed(m MissedTicks) ScheduleOption {
	return func(c *scheduleConfig) { c.missed = m }
}

// WithHistory sets how many claims the leader keeps (1 to
// MaxTickHistory): after each tick it deletes the older ones. Default:
// DefaultTickHistory.
func WithHistory(n int) ScheduleOption {
	return func(c *scheduleConfig) { c.keep = n }
}

// WithScheduleID sets the participant id: its election node's data and
// the "id" of its claims. Default: this host's address, as for
// NewLeaderElection.
func WithScheduleID(id string) ScheduleOption {
	return func(c *scheduleConfig) { c.id = id }
}

// WithScheduleACL sets the ACL of the nodes the schedule creates (election
// and claim nodes, and their parents). Default: WorldACL, as WithACL.
func WithScheduleACL(acl []zk.ACL) ScheduleOption {
	return func(c *scheduleConfig) {
		if len(acl) > 0 {
			c.acl = acl
		}
	}
}

// NewSchedule returns a participant in the schedule at path on s, ticking
// every period. It does no I/O, and returns an error wrapping
// ErrInvalidArgument for a nil session, an invalid path, a period outside
// [MinTickPeriod, MaxTickPeriod] or not whole milliseconds, an offset
// outside [0, every), a history outside [1, MaxTickHistory] or an unknown
// missed-tick policy. Participants of one path should agree on every and
// the offset: each leader ticks by its own.
func NewSchedule(s *Session, path string, every time.Duration, opts ...ScheduleOption) (*Schedule, error) {
	cfg := scheduleConfig{keep: DefaultTickHistory, acl: zk.WorldACL(zk.PermAll)}
	for _, o := range opts {
		o(&cfg)
	}
	switch {
	case s == nil:
		return nil, fmt.Errorf("%w: nil session", ErrInvalidArgument)
	case cfg.keep < 1 || cfg.keep > MaxTickHistory:
		return nil, fmt.Errorf("%w: schedule history %d outside [1, %d]", ErrInvalidArgument, cfg.keep, MaxTickHistory)
	case cfg.missed != RunLatest && cfg.missed != Skip:
		return nil, fmt.Errorf("%w: missed-tick policy %v", ErrInvalidArgument, cfg.missed)
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if err := checkPeriod(every, cfg.offset); err != nil {
		return nil, err
	}
	e, err := NewLeaderElection(s, childPath(path, leaderDir), cfg.id, WithRequeue(), WithACL(cfg.acl))
	if err != nil {
		return nil, err
	}
	return &Schedule{s: s, path: path, every: every, cfg: cfg, e: e}, nil
}

// childPath is dir/name.
func childPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Path returns the schedule's path.
func (sc *Schedule) Path() string { return sc.path }

// Every returns the period.
func (sc *Schedule) Every() time.Duration { return sc.every }

// Election returns the election behind the schedule (at Path()/leader),
// for IsLeader, Leading, Leader and Participants. Do not Run or Campaign
// it while Run runs.
func (sc *Schedule) Election() *LeaderElection { return sc.e }

// Next returns the first tick after now.
func (sc *Schedule) Next(now time.Time) time.Time {
	return tickAt(now, sc.every, sc.cfg.offset).Add(sc.every)
}

// A Tick is one claimed tick, given to the job.
type Tick struct {
	Time   time.Time // the tick's wall-clock time (UTC, whole milliseconds)
	Token  int64     // the leader's fencing token: its election node's czxid
	Node   string    // the claim node's path
	Late   bool      // a missed tick run late (RunLatest)
	Missed int       // ticks since the previous claim that did not run and never will
	Hold   *Hold     // the term's hold, for Guard; the schedule releases it

	rec  claimRecord
	sent time.Time // when the claim was sent (monotonic), to tell a claim answered too late
}

// Run takes part in the schedule until ctx ends: it campaigns and, while
// leader, claims each tick and runs job for it, then campaigns again
// after each term (the election's WithRequeue). job runs on Run's
// goroutine, one tick at a time; its tick context ends when the term may
// be lost or ctx ends, and it should then stop promptly (the next leader
// may start only once it has returned, or the term was lost). A job's
// error is recorded as the tick's outcome (with the exit code of an error
// that has an ExitCode method, such as *exec.ExitError) and does not stop
// the schedule.
//
// Run returns ErrRunning if already running; otherwise ctx's cause once ctx
// ends, ErrClosed when the session is closed, or an error that retrying
// cannot get past (an ACL that forbids the claims: ErrNotAuthorized).
func (sc *Schedule) Run(ctx context.Context, job func(tick context.Context, t Tick) error) error {
	if ctx == nil || job == nil {
		return fmt.Errorf("%w: nil context or job", ErrInvalidArgument)
	}
	return sc.e.Run(ctx, func(lctx context.Context, l *Leadership) error {
		err := runTicks(lctx, &zkTicks{sc: sc, h: l.Hold()}, sc.every, sc.cfg, sc.s.log, job)
		if lctx.Err() != nil || errors.Is(err, ErrLost) {
			return nil // the term is over: campaign again
		}
		return err
	})
}

// Claim claims tick t (a tick of this schedule: Next's, or an earlier one)
// for the leader that holds h, a hold of Election().Campaign, for callers
// that manage terms themselves; Run does it for its own terms. It returns
// an error wrapping ErrLost and ErrNodeGone if h's node is gone (the term is
// over), one wrapping ErrLocked if the tick is claimed already, ctx's
// cause, or a ZooKeeper error. After a connection problem it reads the
// claim node to learn whether its claim went through. It does not consult
// h's local state (Err): the check in ZooKeeper decides, so a hold lost to a
// suspension whose node still exists may still claim (no other leader can
// exist while that node does); check h.Err() first to refuse that too.
func (sc *Schedule) Claim(ctx context.Context, h *Hold, t time.Time) (Tick, error) {
	switch {
	case ctx == nil || h == nil || h.h == nil || !h.Exclusive():
		return Tick{}, fmt.Errorf("%w: nil context or hold", ErrInvalidArgument)
	case !tickAt(t, sc.every, sc.cfg.offset).Equal(t):
		return Tick{}, fmt.Errorf("%w: %v is not a tick of every %v offset %v", ErrInvalidArgument, t, sc.every, sc.cfg.offset)
	}
	st := &zkTicks{sc: sc, h: h}
	if err := st.ensureDir(ctx); err != nil {
		return Tick{}, err
	}
	tk, err := st.claim(ctx, tickPlan{Tick: t.UTC()}, time.Now())
	if errors.Is(err, errTickTaken) {
		return Tick{}, fmt.Errorf("%w: %w: %s", ErrLocked, err, tk.Node)
	}
	return tk, err
}

// Finish records the outcome of tick t, claimed by Claim: ok for a nil
// jobErr, failed otherwise. It writes only while t's leader node exists
// (the same check as the claim's), and returns an error wrapping ErrLost
// otherwise.
func (sc *Schedule) Finish(ctx context.Context, t Tick, jobErr error) error {
	if ctx == nil || t.Hold == nil {
		return fmt.Errorf("%w: nil context or tick", ErrInvalidArgument)
	}
	return (&zkTicks{sc: sc, h: t.Hold}).finish(ctx, t, time.Now(), jobErr)
}
