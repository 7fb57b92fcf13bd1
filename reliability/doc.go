// Package reliability is zklock's fault-injection suite: lock histories
// recorded by separate worker processes under injected faults, checked by
// exact checkers (plan: docs/reliability-plan.md §6).
//
// # Pieces
//
//   - Workers (cmd/worker, RunWorker): OS processes built from this module by
//     the suite (Build). Each runs -clients goroutines with their own
//     Session, contending for -locks locks with the -recipe (mutex,
//     semmutex, rw; multi: a MultiLock over 2-3 of the mutexes, each
//     member logged as its own acquisition; leader: a LeaderElection
//     campaign, a term being a hold). Every step is a JSONL event
//     (invoke, ok, fail, loss, release, write, zkwrite, stat) with the
//     holder's session id, node and token, stamped with CLOCK_MONOTONIC (Mono), which is one clock for the
//     whole machine, so intervals from different processes compare exactly.
//   - The fenced register (cmd/register, Register): its own process; accepts
//     a write iff its token is at least the highest accepted, checking,
//     recording and logging in one atomic step; its acceptance log is part
//     of the history. Holders write to it twice per hold (after acquiring
//     and just before releasing, so a holder paused mid-hold writes late).
//   - The ZooKeeper register: holders also write their token with
//     Multi(hold.Guard(), SetData) to a node per lock; the accepted writes'
//     mzxids order them.
//   - The nemesis (nemesis.go) injects faults through zktest and logs each
//     as fault-start/fault-end: leader or follower SIGKILL and restart,
//     leader SIGSTOP, all servers down, worker SIGSTOP past the session
//     timeout, worker blackhole through its own zktest Proxy, dropped create
//     replies, server-side session expiry (Cluster.Expire; workers connect
//     through proxies so their credentials are recorded), and, in process,
//     a container parent reaped and re-created.
//   - Checkers C1-C7 (checkers.go), exact and run on every scenario:
//     exclusion, fencing, tokens, liveness, clean state, loss-signal timing,
//     API contracts. Each has unit tests on hand-made histories it must
//     reject and accept (checkers_test.go).
//
// # Running
//
// The suite is a Go test, TestIntegration_Reliability, so that it can use
// zktest (which takes a testing.TB). RELIABILITY_MODE selects smoke (the
// default: the same code for seconds, in `make test`), short (`make
// reliability`), soak (`make soak`) or negative (`make
// reliability-negative`, with -tags zklock_negative); scripts/reliability.sh
// runs it and prints the table, the JSON report's path and the summary line.
//
// # Negative controls
//
// Built only with the tag zklock_negative: N1 (workers write unfenced, and
// without the ZooKeeper guard), N2 (the library trusts a predecessor's
// deletion without listing again: root negative_on.go, one line in
// watcher.go), N3 (workers use WithLossLimit(-1): no loss signal before
// expiry) and N4 (the library orders contenders by name as strings: one
// line in naming.go). Without the tag those hooks are false constants.
package reliability
