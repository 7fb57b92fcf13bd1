package zklock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkTicks is the tickStore of one term: the claims of sc, made under the
// check of h, the term's hold.
type zkTicks struct {
	sc *Schedule
	h  *Hold
}

// dir is the claims' parent, a znode path (namespace included).
func (z *zkTicks) dir() string { return z.sc.s.FullPath(childPath(z.sc.path, ticksDir)) }

// ensureDir creates PATH and PATH/ticks, persistent, if missing.
func (z *zkTicks) ensureDir(ctx context.Context) error {
	s := z.sc.s
	dir := z.dir()
	if _, err := s.stat(ctx, dir); err == nil || !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return s.createPersistent(ctx, dir, z.sc.cfg.acl)
}

// createPersistent creates p and its missing parents as empty persistent
// nodes (a parent that exists keeps its kind: the election's may be a
// CONTAINER).
func (s *Session) createPersistent(ctx context.Context, p string, acl []zk.ACL) error {
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		_, err := s.createNode(ctx, p[:i], []byte{}, 0, acl, nil)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			if r := refused(err, accessCreate, p[:i], "schedule"); r != nil {
				return r
			}
			return err
		}
	}
	return nil
}

// latest syncs the session's server and reads the latest claimed tick.
func (z *zkTicks) latest(ctx context.Context) (time.Time, error) {
	s := z.sc.s
	if err := s.sync(ctx, z.dir()); err != nil {
		return time.Time{}, err
	}
	children, err := s.list(ctx, z.dir())
	if err != nil {
		if r := refused(err, accessList, z.dir(), "schedule ticks"); r != nil {
			return time.Time{}, r
		}
		return time.Time{}, err
	}
	ticks := sortedTicks(children)
	if len(ticks) == 0 {
		return time.Time{}, nil
	}
	return ticks[len(ticks)-1], nil
}

// record is the claim record of tick p, made now.
func (z *zkTicks) record(p tickPlan, start time.Time) claimRecord {
	h := z.h
	rec := claimRecord{V: claimVersion, ID: z.sc.e.ID(), Token: h.Token(), Session: fmt.Sprintf("0x%x", uint64(h.SessionID())),
		Leader: h.Node(), EveryMs: z.sc.every.Milliseconds(), OffsetMs: z.sc.cfg.offset.Milliseconds(),
		Start: start.UTC().Format(time.RFC3339Nano), Missed: p.Missed}
	if p.Late {
		rec.LateMs = max(0, start.Sub(p.Tick).Milliseconds())
	}
	return rec
}

// claim sends the claim's multi: check the leader's node, create the
// tick's node. It does not consult the hold's local state: ZooKeeper's
// check decides (Run claims only while its term's context is live). After a connection problem it reads the node to learn the
// outcome: ours (the same token and session) is a claim made.
func (z *zkTicks) claim(ctx context.Context, p tickPlan, start time.Time) (Tick, error) {
	s := z.sc.s
	name := childPath(z.dir(), tickName(p.Tick))
	rec := z.record(p, start)
	data, err := json.Marshal(rec)
	if err != nil {
		return Tick{}, err
	}
	t := Tick{Time: p.Tick, Token: z.h.Token(), Node: s.callerPath(name), Late: p.Late, Missed: p.Missed, Hold: z.h, rec: rec}
	t.sent = time.Now()
	ops := []any{z.h.Guard(), &zk.CreateRequest{Path: name, Data: data, Acl: z.sc.cfg.acl, Flags: 0}}
	if negUnchecked { // test-only (negative_off.go)
		ops = ops[1:]
	}
	results, err := call(ctx, func() ([]zk.MultiResponse, error) {
		rs, err := s.conn.Multi(ops...)
		if negUnchecked && len(rs) == 1 {
			rs = append([]zk.MultiResponse{{}}, rs...)
		}
		return rs, err
	}, nil)
	if err == nil {
		return t, nil
	}
	err = claimError(z.h.Node(), results, err)
	switch {
	case errors.Is(err, errTickTaken), errors.Is(err, ErrLost):
		return t, err
	case errors.Is(err, errNoTicksDir):
		if derr := z.ensureDir(ctx); derr != nil {
			return t, derr
		}
		return t, err // retried
	case !isConnErr(err):
		if r := refused(err, accessCreate, name, "tick claim"); r != nil {
			return t, r
		}
		return t, err
	}
	// The outcome is unknown: the claim may have been made.
	got, _, rerr := s.read(ctx, name)
	if rerr != nil {
		if errors.Is(rerr, zk.ErrNoNode) {
			return t, err // not made: plan again
		}
		return t, rerr
	}
	var seen claimRecord
	if json.Unmarshal(got, &seen) == nil && seen.Token == rec.Token && seen.Session == rec.Session && seen.Start == rec.Start {
		return t, nil
	}
	return t, errTickTaken
}

// finish writes the job's outcome to t's claim node, under the check of
// the leader's node, if the claim is still the one t made (version 0).
func (z *zkTicks) finish(ctx context.Context, t Tick, end time.Time, jobErr error) error {
	s := z.sc.s
	data, err := json.Marshal(t.rec.finished(end, jobErr))
	if err != nil {
		return err
	}
	full := s.FullPath(t.Node)
	results, err := call(ctx, func() ([]zk.MultiResponse, error) {
		return s.conn.Multi(t.Hold.Guard(), &zk.SetDataRequest{Path: full, Data: data, Version: 0})
	}, nil)
	if err == nil {
		return nil
	}
	if len(results) >= 1 && (errors.Is(results[0].Error, zk.ErrNoNode) || errors.Is(results[0].Error, zk.ErrBadVersion)) {
		return fmt.Errorf("%w: %w: leader node %s: %w", ErrLost, ErrNodeGone, t.Hold.Node(), results[0].Error)
	}
	return fmt.Errorf("zklock: record outcome of %s: %w", t.Node, err)
}

// maxPruneOps bounds the deletes of one pruning multi.
const maxPruneOps = 100

// prune deletes the oldest claims beyond the history's bound, at most
// maxPruneOps at a time, under the check of the leader's node.
func (z *zkTicks) prune(ctx context.Context) error {
	s := z.sc.s
	children, err := s.list(ctx, z.dir())
	if err != nil {
		return err
	}
	ticks := sortedTicks(children)
	extra := len(ticks) - z.sc.cfg.keep
	if extra <= 0 {
		return nil
	}
	ops := []any{z.h.Guard()}
	for _, t := range ticks[:min(extra, maxPruneOps)] {
		ops = append(ops, &zk.DeleteRequest{Path: childPath(z.dir(), tickName(t)), Version: -1})
	}
	_, err = call(ctx, func() ([]zk.MultiResponse, error) { return s.conn.Multi(ops...) }, nil)
	return err
}

// fresh: a job starts only if its claim was sent less than half the
// session timeout ago, so that the session cannot have expired meanwhile
// (a server expires it a session timeout after it last heard from it, and
// it heard the claim).
func (z *zkTicks) fresh() time.Duration { return z.sc.s.SessionTimeout() / 2 }

func (z *zkTicks) retry(ctx context.Context, attempt int) int {
	return z.sc.s.cfg.retry.wait(ctx, attempt)
}
