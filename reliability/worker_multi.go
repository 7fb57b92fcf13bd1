package reliability

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/zklock/zklock"
)

// runMulti is one acquisition of the multi recipe (S12): a MultiLock over a
// random subset of 2-3 of the mutexes, given in random order (the library
// sorts them into its canonical order). Each member is logged as its own
// acquisition, with op*10+k as its op, so the per-lock checkers apply: an
// invoke per member at the start, then ok per member (its session, node and
// token) or fail per member, writes per member under its own token and
// guard, loss per member, release per member.
func runMulti(ctx context.Context, cfg WorkerConfig, log *Log, sess *zklock.Session, out sinks, client int, op int64, locks []locker) {
	k := min(2+rand.IntN(2), len(locks))
	idx := rand.Perm(len(locks))[:k]
	members := make([]zklock.Locker, 0, k)
	ops := map[string]*clientOp{} // lock path -> member's op
	var all []*clientOp
	for j, i := range idx {
		m, ok := locks[i].(zklock.Locker)
		if !ok {
			return
		}
		members = append(members, m)
		base := Event{Worker: cfg.Name, Client: client, Op: op*10 + int64(j), Lock: LockPath(cfg.Root, i)}
		w := &clientOp{cfg: cfg, log: log, sess: sess, out: out, base: base, res: "lock-" + strconv.Itoa(i)}
		ops[base.Lock] = w
		all = append(all, w)
	}
	ml, err := zklock.NewMultiLock(members...)
	if err != nil {
		return
	}
	for _, w := range all {
		w.add(KindInvoke, nil)
	}
	// One acquisition in ten has a short caller deadline, so that some fail
	// part-way, holding earlier members (Curator's testSomeLocksFailToLock):
	// all of them must be released and every node deleted (a node left by a
	// live session would block its lock for good: C4; C5 at the end).
	timeout, short := cfg.LockTimeout, rand.IntN(10) == 0
	if short {
		timeout = time.Millisecond + rand.N(30*time.Millisecond)
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	mh, err := ml.Lock(lctx)
	cancel()
	if err != nil {
		for _, w := range all {
			w.add(KindFail, func(e *Event) {
				e.Err = err.Error()
				switch {
				case ctx.Err() != nil:
					e.Err = "stopped: " + e.Err
				case short && errors.Is(err, context.DeadlineExceeded):
					e.Err = "stopped: caller deadline: " + e.Err // not a liveness failure
				}
			})
		}
		return
	}
	holds := mh.Holds()
	var ordered []*clientOp // canonical order, as holds
	for j, l := range ml.Locks() {
		w := ops[l.Path()]
		h := holds[j]
		ordered = append(ordered, w)
		w.add(KindOK, func(e *Event) { e.Session, e.Node, e.Token = h.SessionID(), h.Node(), h.Token() })
	}
	lossDone := make(chan struct{}, len(holds))
	for j, h := range holds {
		w := ordered[j]
		go func() {
			defer func() { lossDone <- struct{}{} }()
			<-h.Done()
			if err := h.Err(); errors.Is(err, zklock.ErrLost) {
				w.add(KindLoss, func(e *Event) { e.Err = err.Error(); e.Token = h.Token() })
			}
		}()
	}
	for j, h := range holds {
		ordered[j].write(h.Token())
		ordered[j].zkWrite(h)
	}
	hold := cfg.HoldMin
	if d := cfg.HoldMax - cfg.HoldMin; d > 0 {
		hold += rand.N(d)
	}
	select { // a correct client stops working once any member is lost
	case <-time.After(hold):
	case <-mh.Done():
	case <-ctx.Done():
	}
	for j, h := range holds {
		ordered[j].write(h.Token())
	}
	for _, w := range ordered {
		w.add(KindRelease, nil)
	}
	_ = mh.Release() // a lost member returns its loss error; the loss event says so
	for range holds {
		<-lossDone
	}
}

// campaigner is a LeaderElection as a locker (the leader recipe, S13): a
// term is a hold, the job's writes are fenced by its token and guard.
type campaigner struct{ e *zklock.LeaderElection }

func (c campaigner) Lock(ctx context.Context) (*zklock.Hold, error) { return c.e.Campaign(ctx) }
