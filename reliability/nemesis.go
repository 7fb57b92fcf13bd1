package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// KillLeader SIGKILLs the leader and restarts it after down (same data
// directory, so zxids never regress), every period, once the ensemble is
// whole (see WholeLeader).
func KillLeader(period, down time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			i, err := WholeLeader(ctx, e, period)
			if err != nil {
				e.T.Logf("leader: %v", err)
				return
			}
			e.Fault(FaultKillLeader, strconv.Itoa(i), down, func() error { return e.C.Kill(i) }, func() error { return e.C.Start(i) })
		})
	}
}

// Together runs nemeses side by side until ctx ends, and returns once each
// has healed its faults.
func Together(nemeses ...func(context.Context, *Env)) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		var wg sync.WaitGroup
		for _, n := range nemeses {
			wg.Go(func() { n(ctx, e) })
		}
		wg.Wait()
	}
}

// PauseLeaderKillFollower SIGSTOPs the leader for pause every period, and
// kills a random follower for down every other period, once the ensemble
// is whole (see WholeLeader).
func PauseLeaderKillFollower(period, pause, down time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		n := 0
		Every(ctx, period, func() {
			n++
			i, err := WholeLeader(ctx, e, period)
			if err != nil {
				e.T.Logf("leader: %v", err)
				return
			}
			if n%2 == 0 {
				f := (i + 1 + rand.IntN(e.C.Size()-1)) % e.C.Size()
				e.Fault(FaultKillFollower, strconv.Itoa(f), down, func() error { return e.C.Kill(f) }, func() error { return e.C.Start(f) })
				return
			}
			e.Fault(FaultPauseLeader, strconv.Itoa(i), pause, func() error { return e.C.Pause(i) }, func() error { return e.C.Resume(i) })
		})
	}
}

// WholeLeader waits, at most bound, until the ensemble is whole (the leader
// counts every other member as a synced follower) and returns the leader.
// ZooKeeper 3.8.0 can lose acknowledged transactions when its leader dies
// while a member that just came back is still syncing from it
// (ZOOKEEPER-4643, ZOOKEEPER-4646, ZOOKEEPER-4785, fixed in later
// releases); the soak met it when a leader was killed 7 ms after the
// previous victim restarted (docs/reliability-results.md). No lock recipe
// survives its store forgetting acknowledged writes, so the nemeses that
// strike the leader wait for a whole ensemble first.
func WholeLeader(ctx context.Context, e *Env, bound time.Duration) (int, error) {
	if e.C.Size() == 1 {
		return e.C.Leader()
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		i, err := e.C.Leader()
		if err == nil {
			out, merr := e.C.FourLetter(i, "mntr")
			if merr == nil && syncedFollowers(out) == e.C.Size()-1 {
				return i, nil
			}
			err = fmt.Errorf("leader %d: not every member is a synced follower yet (%v)", i, merr)
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("ensemble not whole within %v: %w", bound, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// syncedFollowers reads zk_synced_followers from a leader's mntr output
// (-1 if it is not there).
func syncedFollowers(mntr string) int {
	for line := range strings.Lines(mntr) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "zk_synced_followers"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// AllDown kills every server for down (shorter than the session timeout),
// then restarts them, every period.
func AllDown(period, down time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			e.Fault(FaultAllDown, "all", down, func() error {
				for i := range e.C.Size() {
					if err := e.C.Kill(i); err != nil {
						return err
					}
				}
				return nil
			}, func() error { // all at once: the outage is down plus one JVM start
				errs := make(chan error, e.C.Size())
				for i := range e.C.Size() {
					go func() { errs <- e.C.Start(i) }()
				}
				var err error
				for range e.C.Size() {
					err = errors.Join(err, <-errs)
				}
				return err
			})
		})
	}
}

// PauseHolder SIGSTOPs the process of a current lock holder for pause
// (longer than the session timeout: the server expires its sessions while it
// believes it holds), every period.
func PauseHolder(period, pause time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			w := e.holderProc()
			e.Fault(FaultPauseClient, w.Name, pause, func() error { return w.Signal(syscall.SIGSTOP) }, func() error { return w.Signal(syscall.SIGCONT) })
		})
	}
}

// BlackholeHolder drops all traffic of a current holder's process (running)
// through its proxy for d, every period.
func BlackholeHolder(period, d time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			w := e.holderProc()
			if w.Proxy == nil {
				e.T.Errorf("blackhole needs proxies")
				return
			}
			e.Fault(FaultBlackholeClient, w.Name, d, func() error { w.Proxy.Blackhole(); return nil }, func() error { w.Proxy.Heal(); return nil })
		})
	}
}

// ExpireSessions expires the session of a current holder on the servers
// every period, and kills the leader every leaderEvery (0: never).
func ExpireSessions(period, leaderEvery, down time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		if leaderEvery > 0 {
			done := make(chan struct{})
			go func() { defer close(done); KillLeader(leaderEvery, down)(ctx, e) }()
			defer func() { <-done }()
		}
		Every(ctx, period, func() {
			_, _, sid, ok := e.Holder()
			if !ok {
				return
			}
			target := fmt.Sprintf("%#x", sid)
			e.Fault(FaultExpire, target, 200*time.Millisecond, func() error { return e.C.Expire(sid) }, nil)
		})
	}
}

// DeleteHolderNode deletes the node of a current holder, as an operator
// forcing a handover would (zkCli delete), every period. The holder must
// learn of its loss at once (C1 allows it DeleteGrace).
func DeleteHolderNode(period time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			_, node, _, ok := e.Holder()
			if !ok {
				return
			}
			e.Fault(FaultDeleteNode, node, 0, func() error { return e.Conn.Delete(node, -1) }, nil)
		})
	}
}

// DropCreates makes a random worker's proxy drop the reply to its next
// create (applied by the server; the connection is closed), every period.
func DropCreates(period time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			w := e.Workers[rand.IntN(len(e.Workers))]
			e.Fault(FaultDropCreate, w.Name, 300*time.Millisecond, func() error { w.Proxy.DropNextCreateReply(); return nil }, nil)
		})
	}
}

// DropCreatesLagging makes a random worker's proxy drop the reply to the
// worker's next create, every period once the ensemble is whole, and, as
// the create passes, makes a follower other than the create's server lag
// lag behind the leader from that create on (see zktest's Cluster.SetLag),
// and the proxy refuse new connections to every other member, until window
// has passed. The creating client reconnects to the lagging follower,
// which has applied every zxid the client saw (so it accepts the session)
// but not the create (apache/curator#784, CURATOR-264). A follower made to
// lag earlier would refuse a busy client, whose last reply is newer than
// its state. The scenario's cluster must be started with QuorumRelay.
func DropCreatesLagging(period, window, lag time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		Every(ctx, period, func() {
			leader, err := WholeLeader(ctx, e, period)
			if err != nil {
				e.T.Logf("leader: %v", err)
				return
			}
			w := e.Workers[rand.IntN(len(e.Workers))]
			var (
				mu      sync.Mutex
				ended   bool // the window is over: a create passing later is only dropped
				lagging = -1
			)
			e.Fault(FaultDropCreateLag, w.Name, window, func() error {
				w.Proxy.DropNextCreateReplyThen(func(member int) {
					mu.Lock()
					defer mu.Unlock()
					if ended {
						return
					}
					var followers []int
					for i := range e.C.Size() {
						if i != leader && i != member {
							followers = append(followers, i)
						}
					}
					lagging = followers[rand.IntN(len(followers))]
					for i := range e.C.Size() {
						if i != lagging {
							w.Proxy.Refuse(i)
						}
					}
					if err := e.C.SetLag(lagging, lag); err != nil {
						e.T.Errorf("%s: lag %d: %v", e.Sc.Name, lagging, err)
					}
				})
				return nil
			}, func() error {
				mu.Lock()
				defer mu.Unlock()
				ended = true
				w.Proxy.Heal()
				if lagging < 0 {
					return nil
				}
				return e.C.SetLag(lagging, 0)
			})
		})
	}
}

// holderProc returns the process of a current holder, or a random worker.
func (e *Env) holderProc() *Proc {
	for range 20 {
		if name, _, _, ok := e.Holder(); ok {
			if w := e.Worker(name); w != nil {
				return w
			}
		}
	}
	return e.Workers[rand.IntN(len(e.Workers))]
}

// KillHolderProc SIGKILLs the process of a current holder and starts a new
// worker process in its place (a new label, the same proxy) after down.
func (e *Env) KillHolderProc(down time.Duration) {
	w := e.holderProc()
	e.Fault(FaultKillClient, w.Name, down, func() error { w.Kill(); return nil }, func() error {
		e.mu.Lock()
		if e.restarts == nil {
			e.restarts = map[string]int{}
		}
		base, _, _ := strings.Cut(w.Name, ".")
		e.restarts[base]++
		name := fmt.Sprintf("%s.%d", base, e.restarts[base]+1)
		e.mu.Unlock()
		nw, err := e.startWorker(name, w.Proxy)
		if err != nil {
			return err
		}
		e.mu.Lock()
		e.extraLogs = append(e.extraLogs, nw.Log)
		e.mu.Unlock()
		for i := range e.Workers {
			if e.Workers[i] == w {
				e.Workers[i] = nw
			}
		}
		return nw.started()
	})
}

// DisruptLeader hits the current leader (the holder of the election) every
// period, in turn: SIGSTOP of its process for pause (longer than the session
// timeout), server-side expiry of its session (workers must connect through
// proxies so that their credentials are recorded), and SIGKILL of its
// process (a new worker process takes its place).
func DisruptLeader(period, pause time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		n := 0
		Every(ctx, period, func() {
			n++
			switch n % 3 {
			case 1:
				w := e.holderProc()
				e.Fault(FaultPauseClient, w.Name, pause, func() error { return w.Signal(syscall.SIGSTOP) }, func() error { return w.Signal(syscall.SIGCONT) })
				return
			case 0:
				e.KillHolderProc(500 * time.Millisecond)
				return
			}
			_, _, sid, ok := e.Holder()
			if !ok {
				return
			}
			e.Fault(FaultExpire, fmt.Sprintf("%#x", sid), 200*time.Millisecond, func() error { return e.C.Expire(sid) }, nil)
		})
	}
}
