package zklock

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
)

// The claim nodes of a schedule at PATH are PATH/ticks/<unix-ms>, persistent,
// each named by its tick's wall-clock time in Unix milliseconds and holding
// a claimRecord as JSON (docs/protocol.md#scheduled-ticks). The election
// is at PATH/leader.
const (
	ticksDir  = "ticks"
	leaderDir = "leader"
)

// claimVersion is the claim format's version ("v").
const claimVersion = 1

// maxClaimError bounds the job error text stored in a claim.
const maxClaimError = 512

// claimRecord is a claim node's data. Start is written with the claim; End,
// Outcome, ExitCode and Error when the job ends.
type claimRecord struct {
	V        int    `json:"v"`
	ID       string `json:"id"`
	Token    int64  `json:"token"`
	Session  string `json:"session"`
	Leader   string `json:"leader"`
	EveryMs  int64  `json:"every_ms"`
	OffsetMs int64  `json:"offset_ms"`
	Start    string `json:"start"`
	LateMs   int64  `json:"late_ms,omitempty"`
	Missed   int    `json:"missed,omitempty"`
	End      string `json:"end,omitempty"`
	Outcome  string `json:"outcome,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Outcomes of a tick, as TickClaim.Outcome reports them.
const (
	// OutcomeRunning: claimed, the job has not ended, and its leader's
	// node still exists.
	OutcomeRunning = "running"
	// OutcomeOK: the job returned nil (or CMD exited 0).
	OutcomeOK = "ok"
	// OutcomeFailed: the job returned an error (or CMD exited non-zero).
	OutcomeFailed = "failed"
	// OutcomeAbandoned: claimed, but the leader's term ended before the
	// outcome was written: the job may have run in part, or whole.
	OutcomeAbandoned = "abandoned"
	// OutcomeUnreadable: the claim's data is not a claim record (written
	// by something else).
	OutcomeUnreadable = "unreadable"
)

// tickName is the claim node's name for tick t.
func tickName(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// parseTickName reads a claim node's name; ok is false for other names.
func parseTickName(name string) (time.Time, bool) {
	if name == "" || len(name) > 19 || (name[0] == '0' && name != "0") {
		return time.Time{}, false
	}
	ms, err := strconv.ParseInt(name, 10, 64)
	if err != nil || ms < 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(ms).UTC(), true
}

// sortedTicks returns the claim nodes among children, oldest first.
func sortedTicks(children []string) []time.Time {
	out := make([]time.Time, 0, len(children))
	for _, c := range children {
		if t, ok := parseTickName(c); ok {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// exitCoder is an error that carries a process exit status, as
// *exec.ExitError does.
type exitCoder interface{ ExitCode() int }

// finished returns rec with the job's end: outcome, exit code, error.
func (rec claimRecord) finished(end time.Time, jobErr error) claimRecord {
	rec.End = end.UTC().Format(time.RFC3339Nano)
	rec.Outcome = OutcomeOK
	if jobErr != nil {
		rec.Outcome = OutcomeFailed
		msg := jobErr.Error()
		if len(msg) > maxClaimError {
			msg = msg[:maxClaimError]
		}
		rec.Error = msg
	}
	var ec exitCoder
	if errors.As(jobErr, &ec) {
		code := ec.ExitCode()
		rec.ExitCode = &code
	}
	return rec
}

// claimError classifies the failure of a claim's multi, whose results
// hold each operation's error, the leader's check first (ZooKeeper marks
// the operations before the failing one ok and those after it with
// ZRUNTIMEINCONSISTENCY). It returns errTickTaken when the claim node
// exists, an error wrapping ErrLost and ErrNodeGone when the check failed
// (the term is over), errNoTicksDir when the claims' parent is missing, or
// err itself (a connection problem: the outcome is unknown).
func claimError(leader string, results []zk.MultiResponse, err error) error {
	if len(results) >= 2 {
		switch {
		case errors.Is(results[0].Error, zk.ErrNoNode) || errors.Is(results[0].Error, zk.ErrBadVersion):
			return fmt.Errorf("%w: %w: leader node %s: %w", ErrLost, ErrNodeGone, leader, results[0].Error)
		case errors.Is(results[1].Error, zk.ErrNodeExists):
			return errTickTaken
		case errors.Is(results[1].Error, zk.ErrNoNode):
			return errNoTicksDir
		}
	}
	return err
}

// errNoTicksDir: the claims' parent node is missing (deleted by someone).
var errNoTicksDir = errors.New("zklock: schedule's ticks node missing")

// errTickTaken: the tick's claim node exists: someone claimed it.
var errTickTaken = errors.New("zklock: tick claimed already")
