package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// A TickClaim is one claim of a schedule, as ScheduleHistory reads it.
type TickClaim struct {
	Tick     time.Time     // the tick's time, from the node's name
	Node     string        // the claim node's path
	ID       string        // the claiming participant's id
	Token    int64         // its fencing token
	Session  string        // its ZooKeeper session, 0x...
	Leader   string        // its election node
	Start    time.Time     // when the claim was made (the leader's clock)
	End      time.Time     // when the job ended; zero if the outcome is not recorded
	Outcome  string        // OutcomeRunning, OutcomeOK, OutcomeFailed, OutcomeAbandoned or OutcomeUnreadable
	ExitCode *int          // the job's exit code, when it had one (zklock elect --every)
	Error    string        // the job's error, for OutcomeFailed
	Late     time.Duration // how late a missed tick ran (RunLatest); 0 on time
	Missed   int           // ticks before this one, since the previous claim, that did not run
	Every    time.Duration // the claiming leader's period and offset
	Offset   time.Duration
	// Czxid is the claim node's czxid. Claims in czxid order have
	// non-decreasing tokens: a leader claims only while its node exists,
	// and its successor's token is greater.
	Czxid int64
}

// A TickHistory is what ScheduleHistory reads of a schedule.
type TickHistory struct {
	Path   string
	Every  time.Duration // the period of the newest readable claim; 0 if none
	Offset time.Duration
	Claims []TickClaim // oldest first, at most maxHistoryRead
	// Missed lists the ticks between the claims read that have no claim
	// (no one ran them, and no one will), oldest first, at most the
	// newest maxMissedListed; MissedTotal counts them all.
	Missed      []time.Time
	MissedTotal int
	// Overdue counts the ticks after the newest claim whose time passed
	// (more than the due grace): a leader may still run the latest of them
	// late (RunLatest), or none.
	Overdue int
	Next    time.Time    // the first tick after now; zero if Every is unknown
	Leader  *Participant // the schedule's current leader, nil if none
}

// Bounds of ScheduleHistory's reading.
const (
	maxHistoryRead  = 1000
	maxMissedListed = 1000
)

// ScheduleHistory reads the claims of the schedule at path (the newest
// maxHistoryRead), each with its outcome, the ticks missed between them,
// the next tick (after now, by the newest claim's period and offset), and
// the current leader. A path with no schedule has an empty history. It
// creates nothing; claims whose data is not a claim record are
// OutcomeUnreadable, names that are not ticks are ignored.
func ScheduleHistory(ctx context.Context, s *Session, path string) (*TickHistory, error) {
	if s == nil || ctx == nil {
		return nil, fmt.Errorf("%w: nil session or context", ErrInvalidArgument)
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	out := &TickHistory{Path: path}
	dir := s.FullPath(childPath(path, ticksDir))
	children, err := s.list(ctx, dir)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		children = nil
	case err != nil:
		if r := refused(err, accessList, dir, "schedule ticks"); r != nil {
			return nil, r
		}
		return nil, err
	}
	ticks := sortedTicks(children)
	if len(ticks) > maxHistoryRead {
		ticks = ticks[len(ticks)-maxHistoryRead:]
	}
	out.Claims = make([]TickClaim, len(ticks))
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		readErr error
		sem     = make(chan struct{}, 16) // reads in flight
	)
	for i, t := range ticks {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			node := childPath(dir, tickName(t))
			data, stat, err := s.read(ctx, node)
			c := TickClaim{Tick: t, Node: s.callerPath(node)}
			switch {
			case errors.Is(err, zk.ErrNoNode):
				c.Outcome = OutcomeUnreadable // deleted as we read (pruned)
			case err != nil:
				mu.Lock()
				readErr = cmpOr(readErr, err)
				mu.Unlock()
			default:
				fillClaim(&c, data)
				c.Czxid = stat.Czxid
			}
			out.Claims[i] = c
		})
	}
	wg.Wait()
	if readErr != nil {
		if r := refused(readErr, accessRead, dir, "schedule ticks"); r != nil {
			return nil, r
		}
		return nil, readErr
	}
	if ps, err := Participants(ctx, s, childPath(path, leaderDir)); err == nil {
		for i := range ps {
			if ps[i].Holds {
				out.Leader = &ps[i]
				break
			}
		}
	}
	if n := len(out.Claims); n > 0 && out.Claims[n-1].Outcome == OutcomeRunning {
		// Only the newest claim may still run; it does while its leader's
		// node exists.
		c := &out.Claims[n-1]
		if ValidatePath(c.Leader) != nil {
			c.Outcome = OutcomeAbandoned
		} else if _, err := s.stat(ctx, s.FullPath(c.Leader)); errors.Is(err, zk.ErrNoNode) {
			c.Outcome = OutcomeAbandoned
		}
	}
	out.judge(time.Now())
	return out, nil
}

// cmpOr is the first non-nil error.
func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// fillClaim reads a claim record into c.
func fillClaim(c *TickClaim, data []byte) {
	var rec claimRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.V < 1 {
		c.Outcome = OutcomeUnreadable
		return
	}
	c.ID, c.Token, c.Session, c.Leader, c.Error, c.Missed = rec.ID, rec.Token, rec.Session, rec.Leader, rec.Error, rec.Missed
	c.Start, _ = time.Parse(time.RFC3339Nano, rec.Start)
	c.Late = time.Duration(rec.LateMs) * time.Millisecond
	c.ExitCode = rec.ExitCode
	c.Every, c.Offset = time.Duration(rec.EveryMs)*time.Millisecond, time.Duration(rec.OffsetMs)*time.Millisecond
	c.Outcome = OutcomeRunning
	if rec.End != "" {
		c.End, _ = time.Parse(time.RFC3339Nano, rec.End)
		c.Outcome = OutcomeFailed
		if rec.Outcome == OutcomeOK {
			c.Outcome = OutcomeOK
		}
	}
}

// judge fills the period, the missed and overdue ticks and the next tick,
// at now, from the claims.
func (h *TickHistory) judge(now time.Time) {
	for i := len(h.Claims) - 1; i >= 0; i-- {
		c := h.Claims[i]
		if c.Outcome != OutcomeUnreadable && checkPeriod(c.Every, c.Offset) == nil {
			h.Every, h.Offset = c.Every, c.Offset // the newest readable claim's
			break
		}
	}
	if h.Every == 0 {
		return
	}
	for i := 1; i < len(h.Claims); i++ {
		prev, cur := h.Claims[i-1].Tick, h.Claims[i].Tick
		n := int(cur.Sub(prev)/h.Every) - 1
		if n <= 0 {
			continue
		}
		h.MissedTotal += n
		for k := max(1, n-maxMissedListed+1); k <= n; k++ {
			h.Missed = append(h.Missed, prev.Add(time.Duration(k)*h.Every))
		}
		if len(h.Missed) > maxMissedListed {
			h.Missed = h.Missed[len(h.Missed)-maxMissedListed:]
		}
	}
	cur := tickAt(now, h.Every, h.Offset)
	if n := len(h.Claims); n > 0 {
		if newest := h.Claims[n-1].Tick; cur.After(newest) {
			h.Overdue = int(cur.Sub(newest)/h.Every) - 1
			if !now.Before(cur.Add(dueGrace(h.Every))) {
				h.Overdue++
			}
		}
	}
	h.Next = cur.Add(h.Every)
}
