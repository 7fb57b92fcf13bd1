// Package reliability is zklock's fault-injection suite: lock histories
// recorded by separate worker processes under injected faults, checked by
// exact checkers (see docs/reliability.md).
//
// # Pieces
//
//   - Workers (cmd/worker, RunWorker): OS processes built from this module by
//     the suite (Build). Each runs -clients goroutines with their own
//     Session, contending for -locks locks with the -recipe (mutex,
//     semmutex, rw; multi: a MultiLock over 2-3 of the mutexes, each
//     member logged as its own acquisition; leader: a LeaderElection
//     campaign, a term being a hold; schedule: every client takes part in
//     one 1 s zklock.Schedule and logs tick-start and tick-end, S27). Every step is a JSONL event
//     (invoke, ok, fail, loss, release, write, zkinvoke, zkwrite, stat,
//     state) with the holder's session id, node and token, stamped with
//     CLOCK_MONOTONIC (Mono), which is one clock for the whole machine, so
//     intervals from different processes compare exactly. The log is
//     flushed before every external effect, so even a SIGKILLed worker's
//     effects have their cause on disk. When a worker stops it checks
//     with goleak that nothing of its sessions still runs.
//   - The fenced register (cmd/register, Register): its own process; accepts
//     a write iff its token is at least the highest accepted, checking,
//     recording and logging in one atomic step; its acceptance log is part
//     of the history. Holders write to it twice per hold (after acquiring
//     and just before releasing, so a holder paused mid-hold writes late),
//     each write adding an element to the resource's set, which the
//     register reports when it stops.
//   - The PostgreSQL register (S24, pgregister.go): in its place, a table
//     of a real PostgreSQL server (internal/pgtest: one per test binary, a
//     fresh database per run), each write one transaction of fence.Check
//     and the write's row; the workers log each transaction's outcome
//     (committed, stale, error, unknown), and the suite reads the rows, in
//     commit order, once everything has stopped.
//   - The ZooKeeper register: holders also write their token with
//     Multi(hold.Guard(), SetData) to a node per lock, after acquiring and
//     again before releasing (a resumed holder's guard must be refused);
//     the suite reads each node once everything has stopped.
//   - The nemesis (nemesis.go) injects faults through zktest and logs each
//     as fault-start/fault-end: leader or follower SIGKILL and restart,
//     leader SIGSTOP, all servers down, worker SIGSTOP past the session
//     timeout, worker blackhole through its own zktest Proxy, dropped create
//     replies (also with the client sent to a follower made to lag behind
//     its leader from that create on, zktest's SetLag), server-side session
//     expiry (Cluster.Expire; workers connect through proxies so their
//     credentials are recorded), SIGKILL of a leader's worker process (a
//     new process takes its place), deletion of a holder's node by another
//     client, bursts of SIGSTOP/SIGCONT that throttle a holder
//     (throttle.go), and, in process, a container parent reaped and
//     re-created.
//   - Checkers C1-C8, exact and run on every scenario: exclusion (C1);
//     fencing (C2: token order in the register's log and in the ZooKeeper
//     register's mzxid order, the register's final set against the
//     acknowledged writes, and porcupine's linearizability check of the
//     ZooKeeper register as a fenced register, fencing.go; in S24, the
//     database's rows against the transactions' outcomes, pgcheck.go);
//     tokens (C3); liveness (C4, including S2-S4's survival: no loss, no expiry);
//     clean state (C5: children, dump's ephemerals, wchs's watches, the
//     workers' goleak); loss-signal timing (C6: a blackholed holder before
//     the next holder acquires, a paused holder within 1 s of SIGCONT); API
//     contracts (C7); scheduled ticks (C8, schedule.go: no tick started
//     twice, no deposed leader's job or claim after a newer leader's). Each
//     has unit tests on hand-made histories it must
//     reject and accept (checkers_test.go, fencing_test.go,
//     pgcheck_test.go), and C3 a negative test against a wiped data
//     directory (wipe.go).
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
// Every run draws its history as HTML (timeline.go): an overview, one
// window per violation with the checker's explanation in red, and window
// pages with every hold; a violation's message names the file and the
// window ("see …/timeline.html#t=12.300-13.100"), and index.html links the
// runs. The soak (soak.go) runs the scenarios round-robin for SOAK_BUDGET,
// appending each finished run to soak.jsonl, from which cmd/soaksummary
// prints the table and the line "soak: acquisitions=… upper95=…". FuzzAPI
// feeds bad paths, ids, node names and data sizes to the public API
// against a live server; TestNoWallClock checks that the library never
// reads the wall clock.
//
// The scenarios that need members in containers (S18-S20: partitions
// between members, rolling restarts) are in reliability/containers, a
// module of their own (not published), so that this module does not
// depend on testcontainers-go; they run Run with a
// Scenario.Cluster that starts the ensemble there (`make
// reliability-containers`, part of `make soak`).
//
// # Negative controls
//
// Built only with the tag zklock_negative: N1 (workers write unfenced, and
// without the ZooKeeper guard), N2 (the library trusts a predecessor's
// deletion without listing again: root negative_on.go, one line in
// watcher.go), N3 (workers use WithLossLimit(-1): no loss signal before
// expiry), N4 (the library orders contenders by name as strings: one
// line in rules.go), N5 (holders do not watch their own node, so a
// deletion by another client goes unnoticed: root hold.go and nodewatch.go; S17 must
// catch it) and N6 (no sync before the search for an ambiguous create's
// node, and our own node ahead of ours waited on: root find.go and
// rules.go; S23 must catch it), N9 (a schedule's claims without the
// check of the leader's node, with N5's hook: root schedule_zk.go; S27's
// C8 must catch it) and N7 (workers write to PostgreSQL without fence.Check;
// S24's C2 must catch it from the database's rows). Without the tag those
// hooks are false constants.
package reliability
