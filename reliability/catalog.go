package reliability

import (
	"context"
	"time"
)

// Mode scales the scenarios: "smoke" (the default test run, seconds),
// "short" (make reliability, minutes) and "soak" (make soak, the plan's
// durations).
type Mode string

// ByMode returns the value of mode among a scenario's smoke, short and soak
// settings.
func ByMode[T any](mode Mode, smoke, short, soak T) T {
	switch mode {
	case "soak":
		return soak
	case "short":
		return short
	}
	return smoke
}

// Scenarios returns the multi-process and in-process scenarios of mode.
func Scenarios(mode Mode) []*Scenario {
	d := func(smoke, short, soak time.Duration) time.Duration { return ByMode(mode, smoke, short, soak) }
	n := func(smoke, short, soak int) int { return ByMode(mode, smoke, short, soak) }
	s := time.Second
	T := 2 * s  // session timeout (the plan's 4 s, halved at tickTime 100ms)
	T2 := 4 * s // S2-S4: a longer session so that "0 expiries" is fair on 2 cores
	if mode == "soak" {
		T, T2 = 4*s, 8*s
	}
	base := func(name, title string, servers int, dur time.Duration) *Scenario {
		return &Scenario{Name: name, Title: title, Servers: servers, Workers: 4, Clients: 8, Locks: 4,
			Session: T, HoldMin: 0, HoldMax: 5 * time.Millisecond, Duration: dur}
	}
	var out []*Scenario

	s1 := base("S1", "mutex contention, no faults", 1, d(4*s, 15*s, 60*s))
	out = append(out, s1)

	s2 := base("S2", "leader SIGKILL periodically, back after 3s", 3, d(0, 30*s, 120*s))
	s2.Session, s2.Survive = T2, true
	s2.Nemesis = KillLeader(d(0, 8*s, 10*s), 3*s)
	out = append(out, s2)

	s3 := base("S3", "leader SIGSTOP 3s + follower kill", 3, d(0, 30*s, 120*s))
	// The loss limit (2/3 T) must outlast the 3 s leader pause with room
	// for the reconnect: T = 6 s here (the plan's 8 s in soak).
	s3.Session, s3.Survive = max(T2, 6*s), true
	s3.Nemesis = PauseLeaderKillFollower(d(0, 8*s, 15*s), 3*s, 3*s)
	out = append(out, s3)

	s4 := base("S4", "all servers down < T, restarted", 3, d(0, 30*s, 120*s))
	s4.Session, s4.Survive = T2, true
	s4.Nemesis = AllDown(d(0, 10*s, 15*s), 2*s)
	out = append(out, s4)

	s5 := base("S5", "holder process SIGSTOP > T, fenced", 1, d(7*s, 30*s, 180*s))
	s5.HoldMin, s5.HoldMax = 5*time.Millisecond, 30*time.Millisecond
	s5.Nemesis = PauseHolder(d(3*s, 7*s, 7*s), T+T/2)
	out = append(out, s5)

	s6 := base("S6", "holder blackhole > T (running client)", 1, d(8*s, 40*s, 180*s))
	s6.Proxies = true
	s6.LongEvery, s6.LongHold = 100, 3*T
	s6.Nemesis = BlackholeHolder(d(3*s, 7*s, 7*s), T+T/2)
	out = append(out, s6)

	s7 := base("S7", "server-side session expiry + leader kills", 3, d(0, 30*s, 300*s))
	s7.Proxies = true
	s7.Nemesis = ExpireSessions(d(0, 2*s, 3*s), d(0, 10*s, 10*s), 3*s)
	out = append(out, s7)

	s11 := base("S11", "rw lock, 10% writers, leader SIGKILL", 3, d(0, 30*s, 120*s))
	s11.Recipe, s11.Session = "rw", T2
	s11.Nemesis = KillLeader(d(0, 8*s, 10*s), 3*s)
	out = append(out, s11)

	s12 := base("S12", "multi-lock, 2-3 of 5 locks, leader SIGKILL", 3, d(0, 40*s, 120*s))
	s12.Recipe, s12.Session, s12.Locks, s12.Clients = "multi", T2, 5, 4
	s12.Nemesis = KillLeader(d(0, 8*s, 10*s), 3*s)
	// A member later in the canonical order is logged as waited for from
	// the start of the multi-lock's acquisition, but queued only once the
	// earlier members are held: it may sit free meanwhile, so the idle bound
	// is the recovery bound here (every Lock must still end within it).
	c12 := CheckConfigFor(s12)
	c12.Idle = c12.Recovery
	s12.Check = &c12
	out = append(out, s12)

	s13 := base("S13", "leader job runner: leader SIGSTOP > T / expiry", 3, d(0, 40*s, 300*s))
	s13.Recipe, s13.Workers, s13.Clients, s13.Locks, s13.Proxies = "leader", 8, 1, 1, true
	// Half the terms run jobs until the term is lost (or 3T pass), so that
	// the faults find a leader mid-term; the others hand over quickly.
	s13.HoldMin, s13.HoldMax = 20*time.Millisecond, 200*time.Millisecond
	s13.LongEvery, s13.LongHold = 2, 3*T
	s13.Nemesis = DisruptLeader(d(0, 10*s, 10*s), T+T/2)
	out = append(out, s13)

	sm1 := base("S1m", "semaphore mutex contention, no faults", 1, d(0, 15*s, 60*s))
	sm1.Recipe = "semmutex"
	out = append(out, sm1)

	sm5 := base("S5m", "semaphore mutex, holder SIGSTOP > T", 1, d(0, 25*s, 180*s))
	sm5.Recipe = "semmutex"
	sm5.HoldMin, sm5.HoldMax = 5*time.Millisecond, 30*time.Millisecond
	sm5.Nemesis = PauseHolder(d(0, 7*s, 7*s), T+T/2)
	out = append(out, sm5)

	s17 := base("S17", "holder's node deleted by another client", 1, d(6*s, 20*s, 120*s))
	// One hold in 40 lasts T, so that deletions find long holders too: a
	// holder that missed the deletion would overlap its successor for
	// longer than C1's DeleteGrace.
	s17.LongEvery, s17.LongHold = 40, T
	s17.Nemesis = DeleteHolderNode(d(150*time.Millisecond, 150*time.Millisecond, 150*time.Millisecond))
	out = append(out, s17)

	s21 := base("S21", "holder throttled: SIGSTOP/SIGCONT bursts", 1, d(0, 20*s, 120*s))
	// Bursts of 20-200 ms stopped / 10-50 ms running for 3 s, each stop far
	// below the loss limit: a CPU-starved holder. One hold in 100 lasts T so
	// that bursts land mid-hold.
	s21.HoldMin, s21.HoldMax = 5*time.Millisecond, 30*time.Millisecond
	s21.LongEvery, s21.LongHold = 100, T
	ms := time.Millisecond
	s21.Nemesis = ThrottleHolder(d(0, 5*s, 6*s), 3*s, []time.Duration{20 * ms, 50 * ms, 100 * ms, 200 * ms}, []time.Duration{10 * ms, 50 * ms})
	out = append(out, s21)

	s22 := base("S22", "in-process handoff: 4 goroutines a session, expiry + leader kills", 3, d(0, 20*s, 120*s))
	// Goroutines of one session queue behind each other, so releases hand
	// the lock to a local waiter before the delete commits (root handoff.go).
	s22.Clients, s22.Share, s22.Locks, s22.Proxies = 2, 4, 2, true
	s22.Nemesis = ExpireSessions(d(0, 3*s, 3*s), d(0, 8*s, 10*s), 3*s)
	out = append(out, s22)

	s24 := base("S24", "PostgreSQL via fence.Check: holder SIGSTOP > T, leader kills", 3, d(0, 20*s, 120*s))
	// The register is a PostgreSQL table written through fence.Check (C2
	// judges the database's rows): paused holders write late, and leader
	// kills end sessions while transactions are open.
	s24.Postgres = true
	s24.HoldMin, s24.HoldMax = 5*time.Millisecond, 30*time.Millisecond
	s24.Nemesis = pgNemesis(d(0, 5*s, 7*s), T+T/2, d(0, 9*s, 10*s))
	out = append(out, s24)

	out = append(out, &Scenario{Name: "S25", Title: "ensemble rebuilt from empty, fenced by era", Servers: 1, Locks: 1,
		Session: T, Postgres: true, Duration: d(20*s, 30*s, 120*s), InProcess: EnsembleRebuilt})

	s26 := base("S26", "creator ACLs, intruder without credentials, leader SIGKILL", 3, d(0, 30*s, 120*s))
	// Holders authenticate and create every node with Curator's
	// CREATOR_ALL_ACL; an unauthenticated client tries to list, read,
	// revoke, delete, queue and create in the same directories throughout.
	s26.Session, s26.Auth, s26.ACL = T2, "digest:team:s3cret", "creator"
	s26.Nemesis = Together(KillLeader(d(0, 8*s, 10*s), 3*s), Intruder(200*time.Millisecond))
	out = append(out, s26)

	out = append(out, ScheduleScenario(d(0, 40*s, 120*s), T))

	s8 := base("S8", "dropped create replies", 1, d(0, 10*s, 60*s))
	s8.Proxies = true
	s8.Nemesis = DropCreates(d(0, 500*time.Millisecond, 500*time.Millisecond))
	out = append(out, s8)

	s23 := base("S23", "dropped create replies, lagging follower", 3, d(0, 15*s, 120*s))
	s23.Proxies, s23.QuorumRelay, s23.Session = true, true, T2
	s23.Nemesis = lagNemesis(T2)
	out = append(out, s23)

	out = append(out, &Scenario{Name: "S9", Title: "predecessor vanishes (waiter's pred expires)", Servers: 1, Locks: 1,
		Session: T, Duration: d(time.Minute, 5*time.Minute, 10*time.Minute), InProcess: PredecessorVanishes(n(5, 20, 200))})
	out = append(out, &Scenario{Name: "S10", Title: "stale own node: holder expired, locks again", Servers: 1, Locks: 1,
		Session: T, Duration: d(time.Minute, 5*time.Minute, 10*time.Minute), InProcess: StaleOwnNode(n(4, 15, 200))})
	out = append(out, &Scenario{Name: "S14", Title: "container parent reaped and re-created", Servers: 1, Locks: 1,
		Session: T, Duration: d(time.Minute, 5*time.Minute, 10*time.Minute), InProcess: ParentLifecycle(n(3, 20, 100))})
	out = append(out, &Scenario{Name: "S16", Title: "reentrancy and API contracts", Servers: 1, Locks: 1,
		Session: T, Duration: time.Minute, InProcess: Contracts})
	return out
}

// Negatives returns the negative controls, each with the scenario that must
// catch it.
func Negatives() []*Scenario {
	s := time.Second
	T := 2 * s
	base := func(name, neg, title string) *Scenario {
		return &Scenario{Name: name, Negative: neg, Title: title, Servers: 1, Workers: 4, Clients: 8, Locks: 4,
			Session: T, HoldMax: 5 * time.Millisecond, Duration: 20 * s}
	}
	n1 := base("S5", "N1", "holder process SIGSTOP > T, fenced")
	n1.HoldMin, n1.HoldMax = 5*time.Millisecond, 30*time.Millisecond
	n1.Nemesis = PauseHolder(4*s, T+T/2)
	n2 := &Scenario{Name: "S9", Negative: "N2", Title: "predecessor vanishes", Servers: 1, Locks: 1, Session: T,
		Duration: time.Minute, InProcess: PredecessorVanishes(10)}
	n3 := base("S6", "N3", "holder blackhole > T (running client)")
	n3.Proxies = true
	n3.LongEvery, n3.LongHold = 100, 3*T
	n3.Nemesis = BlackholeHolder(4*s, T+T/2)
	n4 := base("S1", "N4", "mutex contention, no faults")
	n4.Duration = 10 * s
	n5 := base("S17", "N5", "holder's node deleted by another client")
	n5.LongEvery, n5.LongHold = 10, 3*T
	n5.Nemesis = DeleteHolderNode(150 * time.Millisecond)
	n5.Duration = 15 * s
	n6 := base("S23", "N6", "dropped create replies, lagging follower")
	n6.Servers, n6.Proxies, n6.QuorumRelay, n6.Session = 3, true, true, 2*T
	n6.Nemesis = lagNemesis(2 * T)
	n6.Duration = 25 * s

	n7 := base("S24", "N7", "PostgreSQL via fence.Check: holder SIGSTOP > T, leader kills")
	n7.Servers, n7.Postgres = 3, true
	n7.HoldMin, n7.HoldMax = 5*time.Millisecond, 30*time.Millisecond
	n7.Nemesis = pgNemesis(4*s, T+T/2, 9*s)
	// A stale write needs a resumed holder to write before it hears of its
	// loss: a race each pause may or may not win (in 20 s, missed 2 runs of 4
	// on ZooKeeper 3.8 on a loaded machine), so the control runs longer.
	n7.Duration = 45 * s
	n8 := &Scenario{Name: "S25", Negative: "N8", Title: "ensemble rebuilt from empty, fenced by era", Servers: 1, Locks: 1,
		Session: T, Postgres: true, Duration: 20 * s, InProcess: EnsembleRebuilt}
	n9 := ScheduleNegative(45*s, T)
	return []*Scenario{n1, n2, n3, n4, n5, n6, n7, n8, n9}
}

// lagNemesis is S23's: a worker's create reply dropped and its client sent
// to a follower that lags T/5 from that create on, for two lags, then half
// a second without faults. The clients' read timeout (2T/3) must outlast
// the lag: a session's pings queue behind its own writes.
func lagNemesis(T time.Duration) func(context.Context, *Env) {
	lag := T / 5
	return DropCreatesLagging(2*lag+500*time.Millisecond, 2*lag, lag)
}

// pgNemesis is S24's: a holder's process SIGSTOPped for pause every
// period, and beside it the leader SIGKILLed for 3 s every leaderEvery.
func pgNemesis(period, pause, leaderEvery time.Duration) func(context.Context, *Env) {
	return Together(PauseHolder(period, pause), KillLeader(leaderEvery, 3*time.Second))
}
