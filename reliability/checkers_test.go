package reliability

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const L = "/r/lock-0"

// hist builds a history from compact steps; times are milliseconds.
type hist []Event

func (h *hist) add(ms int64, e Event) *hist {
	e.T = ms * int64(time.Millisecond)
	if e.Lock == "" && e.Kind != KindFaultStart && e.Kind != KindFaultEnd && e.Kind != KindContract {
		e.Lock = L
	}
	*h = append(*h, e)
	return h
}

// acq adds a complete acquisition: invoke at inv, ok at start with token,
// release at end (0: none).
func (h *hist) acq(w string, op int64, inv, start, end, token int64) *hist {
	base := Event{Worker: w, Client: 1, Op: op}
	e := base
	e.Kind = KindInvoke
	h.add(inv, e)
	e = base
	e.Kind, e.Token, e.Session, e.Node = KindOK, token, 0x100+token, L+"/n"
	h.add(start, e)
	e = base
	e.Kind, e.Czxid, e.Owner, e.OK, e.Node = KindStat, token, 0x100+token, true, L+"/n"
	h.add(start, e)
	if end > 0 {
		e = base
		e.Kind = KindRelease
		h.add(end, e)
	}
	return h
}

func (h *hist) fault(name, target string, from, to int64) *hist {
	h.add(from, Event{Kind: KindFaultStart, Fault: name, Target: target})
	return h.add(to, Event{Kind: KindFaultEnd, Fault: name, Target: target})
}

var cfg = CheckConfig{PauseGrace: 5 * time.Second, Recovery: 5 * time.Second, Idle: 2 * time.Second}

func only(t *testing.T, v []Violation, checker string) {
	t.Helper()
	require.NotEmpty(t, v, "checker %s accepted a bad history", checker)
	for _, x := range v {
		require.Equal(t, checker, x.Checker, x.Detail)
	}
}

func good() *hist {
	h := &hist{}
	return h.acq("w1", 1, 0, 10, 20, 100).acq("w2", 1, 5, 25, 40, 200).acq("w1", 2, 21, 45, 50, 300)
}

func TestCheckersAcceptGoodHistory(t *testing.T) {
	h := Analyze(*good())
	require.Empty(t, CheckAll(h, &FinalState{Children: map[string][]string{L: nil}, Watches: map[string]int{"0": 0}}, cfg))
	require.Equal(t, 3, h.Acquisitions())
}

func TestC1RejectsOverlap(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 30, 100).acq("w2", 1, 5, 20, 40, 200)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
}

func TestC1ToleratesPausedHolderOnly(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 3000, 100).acq("w2", 1, 5, 2500, 2600, 200).fault(FaultPauseClient, "w1", 100, 2900)
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
	// Paused, but still believing it holds long after SIGCONT: rejected.
	h = &hist{}
	h.acq("w1", 1, 0, 10, 9000, 100).acq("w2", 1, 5, 2500, 2600, 200).fault(FaultPauseClient, "w1", 100, 2900)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
	// A pause of another worker excuses nothing.
	h = &hist{}
	h.acq("w1", 1, 0, 10, 3000, 100).acq("w2", 1, 5, 2500, 2600, 200).fault(FaultPauseClient, "w3", 100, 2900)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
}

// w1 got the lock (older node, token 100) and was SIGSTOPped before it
// could log its ok; w2 got it after w1's session expired. w1's ok is stamped
// after w2's, yet w1 is the paused earlier holder: tolerated if it saw the
// loss soon after SIGCONT, rejected if not, and rejected if w1's node were
// the newer one.
func TestC1PausedBeforeItsOkWasStamped(t *testing.T) {
	h := &hist{}
	h.acq("w2", 1, 2000, 2500, 3000, 200).acq("w1", 1, 0, 2910, 3500, 100).fault(FaultPauseClient, "w1", 100, 2900)
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
	h = &hist{}
	h.acq("w2", 1, 2000, 2500, 3000, 200).acq("w1", 1, 0, 2910, 9000, 100).fault(FaultPauseClient, "w1", 100, 2900)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
	h = &hist{}
	h.acq("w2", 1, 2000, 2500, 3000, 100).acq("w1", 1, 0, 2910, 3500, 200).fault(FaultPauseClient, "w1", 100, 2900)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
}

func TestC1LossEndsHold(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 3000, 100).acq("w2", 1, 5, 2500, 2600, 200)
	h.add(2000, Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1})
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
}

func TestC2RejectsStaleAcceptedWrite(t *testing.T) {
	h := &hist{}
	h.add(1, Event{Kind: KindReg, Lock: "lock-0", Token: 200, OK: true})
	h.add(2, Event{Kind: KindReg, Lock: "lock-0", Token: 100, OK: false}) // rejected: fine
	h.add(3, Event{Kind: KindReg, Lock: "lock-0", Token: 200, OK: true})  // equal: fine
	require.Empty(t, CheckFencing(Analyze(*h)))
	h.add(4, Event{Kind: KindReg, Lock: "lock-0", Token: 100, OK: true})
	only(t, CheckFencing(Analyze(*h)), "C2")

	z := &hist{}
	z.add(1, Event{Kind: KindZKWrite, Token: 200, Zxid: 10, OK: true})
	z.add(2, Event{Kind: KindZKWrite, Token: 100, Zxid: 5, OK: true}) // earlier in zxid order: fine
	require.Empty(t, CheckFencing(Analyze(*z)))
	z.add(3, Event{Kind: KindZKWrite, Token: 150, Zxid: 11, OK: true})
	only(t, CheckFencing(Analyze(*z)), "C2")
}

func TestC3RejectsTokenRegressionAndWrongCzxid(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 20, 300).acq("w2", 1, 5, 25, 40, 200)
	only(t, CheckTokens(Analyze(*h)), "C3")

	h = &hist{}
	h.acq("w1", 1, 0, 10, 20, 100)
	h.add(11, Event{Kind: KindStat, Worker: "w1", Client: 1, Op: 1, OK: true, Czxid: 99, Owner: 0x100 + 100})
	only(t, CheckTokens(Analyze(*h)), "C3")

	h = &hist{}
	h.acq("w1", 1, 0, 10, 20, 100).acq("w2", 1, 5, 25, 40, 100)
	only(t, CheckTokens(Analyze(*h)), "C3")
}

func TestC4RejectsHungWaiterAndIdleLock(t *testing.T) {
	h := good()
	h.add(60, Event{Kind: KindInvoke, Worker: "w3", Client: 1, Op: 1})
	only(t, CheckLiveness(Analyze(*h), cfg), "C4")

	// Free for 5 s while w3 waits, no fault: rejected; with a fault: accepted.
	h = good()
	h.acq("w3", 1, 60, 5060, 5070, 400)
	only(t, CheckLiveness(Analyze(*h), cfg), "C4")
	h.fault(FaultKillLeader, "0", 100, 200)
	require.Empty(t, CheckLiveness(Analyze(*h), cfg))

	// Free for 20 s while w3 waits: rejected even with faults all along.
	h = good()
	h.acq("w3", 1, 60, 20060, 20070, 400)
	for t0 := int64(100); t0 < 20000; t0 += 3000 {
		h.fault(FaultKillLeader, "0", t0, t0+2000)
	}
	only(t, CheckLiveness(Analyze(*h), cfg), "C4")

	// A failure outside faults is a liveness violation; "stopped" is not.
	h = good()
	h.add(60, Event{Kind: KindInvoke, Worker: "w3", Client: 1, Op: 1})
	h.add(70, Event{Kind: KindFail, Worker: "w3", Client: 1, Op: 1, Err: "context deadline exceeded"})
	only(t, CheckLiveness(Analyze(*h), cfg), "C4")
	(*h)[len(*h)-1].Err = "stopped: context canceled"
	require.Empty(t, CheckLiveness(Analyze(*h), cfg))
}

// The history of a wedged S9 iteration: A holds, B's session is expired
// while B waits, and B's Lock never stops waiting; A releases only once B
// returns, so the lock is never free, and both failures (at the run's
// deadline) overlap the expiry. C4 must still reject it by B's session.
func TestC4RejectsWaiterOutlivingItsExpiredSession(t *testing.T) {
	const sid = 0x1000025cd8c0010
	target := fmt.Sprintf("%#x", sid)
	wedged := func(bSession, bEnd int64, bErr string) *hist {
		h := &hist{}
		h.acq("A", 14, 0, 1, 0, 137)
		h.add(2, Event{Kind: KindInvoke, Worker: "B", Client: 1, Op: 14})
		h.add(690, Event{Kind: KindState, Worker: "B", Client: 1, Session: bSession, Name: "connected"})
		h.add(698, Event{Kind: KindInvoke, Worker: "C", Client: 1, Op: 14})
		h.fault(FaultExpire, target, 699, 702)
		h.add(bEnd, Event{Kind: KindFail, Worker: "B", Client: 1, Op: 14, Err: bErr})
		return h
	}
	h := wedged(sid, 274_000, "context deadline exceeded")
	h.add(274_000, Event{Kind: KindFail, Worker: "C", Client: 1, Op: 14, Err: "context deadline exceeded"})
	h.add(274_000, Event{Kind: KindRelease, Worker: "A", Client: 1, Op: 14})
	v := CheckLiveness(Analyze(*h), cfg)
	only(t, v, "C4")
	require.Len(t, v, 1, "B, by its session")
	require.Contains(t, v[0].Detail, "B/1/14")

	// B stops waiting within the bound: accepted, and C acquires after A.
	h = wedged(sid, 1_700, "zklock: session expired")
	h.add(2_000, Event{Kind: KindRelease, Worker: "A", Client: 1, Op: 14})
	h.acq("C", 14, 698, 2_003, 2_004, 141)
	require.Empty(t, CheckLiveness(Analyze(*h), cfg))

	// Someone else's session expired: B's long wait is not judged by it.
	h = wedged(sid+1, 274_000, "context deadline exceeded")
	h.add(274_000, Event{Kind: KindFail, Worker: "C", Client: 1, Op: 14, Err: "context deadline exceeded"})
	h.add(274_000, Event{Kind: KindRelease, Worker: "A", Client: 1, Op: 14})
	require.Empty(t, CheckLiveness(Analyze(*h), cfg))
}

func TestC5RejectsLeftovers(t *testing.T) {
	only(t, CheckCleanState(&FinalState{Children: map[string][]string{L: {"_c_x-lock-0000000001"}}}), "C5")
	only(t, CheckCleanState(&FinalState{Watches: map[string]int{"1": 2}}), "C5")
	only(t, CheckCleanState(&FinalState{Ephemerals: map[string][]string{"0": {L + "/x"}}}), "C5")
	leak := &hist{}
	leak.add(1, Event{Kind: KindContract, Worker: "w1", Name: ContractNoLeak, Err: "found unexpected goroutines"})
	only(t, CheckContracts(Analyze(*leak)), "C5")
	require.Empty(t, CheckCleanState(&FinalState{Children: map[string][]string{L: {}}, Watches: map[string]int{"1": 0}}))
}

func TestC6RejectsLateLossSignal(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 0, 100).acq("w2", 1, 5, 3000, 3010, 200).fault(FaultBlackholeClient, "w1", 100, 5000)
	h.add(2000, Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1})
	require.Empty(t, CheckLossTiming(Analyze(*h)))

	h = &hist{}
	h.acq("w1", 1, 0, 10, 0, 100).acq("w2", 1, 5, 3000, 3010, 200).fault(FaultBlackholeClient, "w1", 100, 5000)
	h.add(5100, Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1})
	v := CheckLossTiming(Analyze(*h))
	only(t, v, "C6")
	require.True(t, strings.Contains(v[0].Detail, "w1/1/1"))
}

func TestC6RejectsLateLossAfterResume(t *testing.T) {
	rc := cfg
	rc.LossLimit, rc.Resume, rc.Session = 1300*time.Millisecond, time.Second, 2*time.Second
	paused := func(loss int64) *hist {
		h := &hist{}
		h.acq("w1", 1, 0, 10, 0, 100).fault(FaultPauseClient, "w1", 100, 3100)
		return h.add(loss, Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1})
	}
	require.Empty(t, CheckResumeTiming(Analyze(*paused(3200)), rc))
	only(t, CheckResumeTiming(Analyze(*paused(4500)), rc), "C6")
	h := &hist{} // never ended at all
	h.acq("w1", 1, 0, 10, 0, 100).fault(FaultPauseClient, "w1", 100, 3100)
	only(t, CheckResumeTiming(Analyze(*h), rc), "C6")
	// Lock returned before the pause, ok stamped after it (the session
	// expired meanwhile): a paused holder as well.
	h = &hist{}
	h.add(0, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x164, Name: "connected"})
	h.acq("w1", 1, 0, 3101, 4500, 100).fault(FaultPauseClient, "w1", 100, 3100)
	only(t, CheckResumeTiming(Analyze(*h), rc), "C6")
	// ... but not one that went on in a new session after the pause.
	h = &hist{}
	h.add(0, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x1, Name: "connected"})
	h.add(3500, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x164, Name: "connected"})
	h.acq("w1", 1, 0, 3600, 5000, 100).fault(FaultPauseClient, "w1", 100, 3100)
	require.Empty(t, CheckResumeTiming(Analyze(*h), rc))
	// ... nor one whose node was behind others still granted after SIGCONT:
	// its session outlived the pause (a leader elected during it started
	// the session's timeout afresh) and its Lock waited in the queue (S24,
	// soak G's run 60).
	h = &hist{}
	h.add(0, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x164, Name: "connected"})
	h.acq("w2", 2, 3000, 3150, 3300, 90).acq("w1", 1, 0, 3400, 4500, 100).fault(FaultPauseClient, "w1", 100, 3100)
	require.Empty(t, CheckResumeTiming(Analyze(*h), rc))
	// An older node granted after SIGCONT proves nothing if it is the
	// paused worker's own, or if its hold began before SIGCONT.
	for _, b := range []struct {
		w     string
		start int64
	}{{"w1", 3150}, {"w2", 3050}} {
		h = &hist{}
		h.add(0, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x164, Name: "connected"})
		h.acq(b.w, 2, 50, b.start, b.start+100, 90).acq("w1", 1, 0, 3400, 4500, 100).fault(FaultPauseClient, "w1", 100, 3100)
		only(t, CheckResumeTiming(Analyze(*h), rc), "C6")
	}
	// A pause shorter than the loss limit is survivable: no bound.
	h = &hist{}
	h.acq("w1", 1, 0, 10, 0, 100).fault(FaultPauseClient, "w1", 100, 1000)
	require.Empty(t, CheckResumeTiming(Analyze(*h), rc))
}

func TestC7RejectsBrokenContracts(t *testing.T) {
	h := good()
	h.add(70, Event{Kind: KindRelease, Worker: "w1", Client: 1, Op: 2})
	only(t, CheckContracts(Analyze(*h)), "C7")

	h = &hist{}
	h.add(0, Event{Kind: KindInvoke, Worker: "w1", Client: 1, Op: 1})
	h.add(1, Event{Kind: KindOK, Worker: "w1", Client: 1, Op: 1, Token: 0, Session: 1, Node: L + "/n"})
	only(t, CheckContracts(Analyze(*h)), "C7")

	h = good()
	h.add(80, Event{Kind: KindContract, Name: "double-release", Err: "second Release returned nil"})
	only(t, CheckContracts(Analyze(*h)), "C7")
	h = good()
	h.add(80, Event{Kind: KindContract, Name: "double-release", OK: true})
	require.Empty(t, CheckContracts(Analyze(*h)))
}

func TestC1C3Readers(t *testing.T) {
	read := func(h *hist, from int) {
		for i := from; i < len(*h); i++ {
			(*h)[i].Read = true
		}
	}
	// Two readers overlap, stamped out of token order: accepted.
	h := &hist{}
	h.acq("w1", 1, 0, 10, 30, 200).acq("w2", 1, 5, 20, 40, 100)
	read(h, 0)
	h.acq("w3", 1, 6, 50, 60, 300)
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
	require.Empty(t, CheckTokens(Analyze(*h)))
	// A writer overlapping a reader: rejected.
	h = &hist{}
	h.acq("w1", 1, 0, 10, 30, 100)
	read(h, 0)
	h.acq("w2", 1, 5, 20, 40, 200)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
	// A reader whose token is below an earlier writer's: rejected.
	h = &hist{}
	h.acq("w1", 1, 0, 10, 30, 200)
	n := len(*h)
	h.acq("w2", 1, 5, 35, 40, 100)
	read(h, n)
	only(t, CheckTokens(Analyze(*h)), "C3")
}

func TestC1ToleratesForcedExpiryOfThatSessionOnly(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 300, 100).acq("w2", 1, 5, 250, 260, 200).fault(FaultExpire, "0x164", 200, 210) // 0x100+100
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
	h = &hist{}
	h.acq("w1", 1, 0, 10, 300, 100).acq("w2", 1, 5, 250, 260, 200).fault(FaultExpire, "0x999", 200, 210)
	only(t, CheckExclusion(Analyze(*h), cfg), "C1")
}

// Another client deleted w1's node (S17's nemesis): the overlap with the
// next holder is tolerated if w1's hold ended within DeleteGrace (1 s) of
// the deletion, also when the deletion struck while w1's Lock was
// returning, before its ok was stamped (the nemesis deletes the head of
// the queue; soak C, S17 #2).
func TestC1ToleratesDeletedHolderNode(t *testing.T) {
	for _, tc := range []struct {
		name          string
		from, to, end int64 // the deletion, and when w1's hold ended (ms)
		target        string
		ok            bool
	}{
		{"during the hold, loss within the grace", 100, 101, 103, L + "/n", true},
		{"while Lock returned, loss within the grace", 8, 9, 103, L + "/n", true},
		{"during the hold, loss too late", 100, 101, 1500, L + "/n", false},
		{"while Lock returned, loss too late", 8, 9, 1500, L + "/n", false},
		{"another node deleted", 100, 101, 103, L + "/other", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hist{} // w1 holds from 10 ms, w2 from 102 ms: they overlap
			h.acq("w1", 1, 0, 10, tc.end, 100).acq("w2", 1, 5, 102, 110, 200).fault(FaultDeleteNode, tc.target, tc.from, tc.to)
			v := CheckExclusion(Analyze(*h), cfg)
			if tc.ok {
				require.Empty(t, v)
			} else {
				only(t, v, "C1")
			}
		})
	}
}

func TestC4SurvivalRejectsLossAndExpiry(t *testing.T) {
	sv := cfg
	sv.Survive = true
	base := func() *hist {
		h := good()
		h.fault(FaultAllDown, "all", 100, 200)
		h.add(150, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x101, Name: "suspended"})
		return h
	}
	require.Empty(t, CheckSurvival(Analyze(*base()), sv))
	require.Empty(t, CheckSurvival(Analyze(*base().add(300, Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1})), cfg), "only when Survive")
	only(t, CheckSurvival(Analyze(*base().add(300, Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1})), sv), "C4")
	only(t, CheckSurvival(Analyze(*base().add(300, Event{Kind: KindState, Worker: "w1", Client: 1, Name: "expired"})), sv), "C4")
	missed := good()
	missed.fault(FaultAllDown, "all", 100, 200)
	only(t, CheckSurvival(Analyze(*missed), sv), "C4")

	// A fault delivered past the loss limit (planned 100 ms, lasted 5 s)
	// excuses the losses it can cause, and only those.
	sv.LossLimit, sv.Session = 2*time.Second, 4*time.Second
	long := func(at int64, e Event) []Violation {
		h := good()
		h.fault(FaultAllDown, "all", 100, 5100)
		h.add(150, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x101, Name: "suspended"})
		return CheckSurvival(Analyze(*h.add(at, e)), sv)
	}
	loss := Event{Kind: KindLoss, Worker: "w1", Client: 1, Op: 1}
	expired := Event{Kind: KindState, Worker: "w1", Client: 1, Name: "expired"}
	require.Empty(t, long(2200, loss), "suspended past the loss limit")
	require.Empty(t, long(5200, expired), "past the session timeout")
	require.Empty(t, long(900, loss), "a ping interval (T/3) before the limit: heard last before the fault")
	only(t, long(700, loss), "C4")     // sooner than the loss limit allows
	only(t, long(7200, loss), "C4")    // long after the fault
	only(t, long(2700, expired), "C4") // sooner than the session timeout
	short := good()
	short.fault(FaultAllDown, "all", 100, 1900) // within the limit
	short.add(150, Event{Kind: KindState, Worker: "w1", Client: 1, Session: 0x101, Name: "suspended"})
	only(t, CheckSurvival(Analyze(*short.add(2200, loss)), sv), "C4")
}

// A SIGKILLed holder holds nothing after the kill: the next holder (after
// its session expired) does not overlap it, and its unanswered Lock calls
// are not hung waiters. Without the kill in the nemesis log both are
// violations.
func TestKilledHolderEndsAtKill(t *testing.T) {
	h := &hist{}
	h.acq("w1", 1, 0, 10, 0, 100) // never released: the process died
	h.add(20, Event{Kind: KindInvoke, Worker: "w1", Client: 2, Op: 1})
	h.acq("w2", 1, 15, 2100, 2200, 200)
	require.NotEmpty(t, CheckExclusion(Analyze(*h), cfg))
	require.NotEmpty(t, CheckLiveness(Analyze(*h), cfg))
	h.fault(FaultKillClient, "w1", 50, 550)
	require.Empty(t, CheckExclusion(Analyze(*h), cfg))
	require.Empty(t, CheckLiveness(Analyze(*h), cfg))
	require.True(t, Analyze(*h).ByID["w1/1/1"].Killed)
}

// The deletion struck the head of the queue while its Lock was returning,
// and the next holder's ok was stamped first (S17 on ZooKeeper 3.9 under
// load): w1, with the older node (token 100), returns at 105 ms, after w2
// (token 200) at 102 ms; its node was deleted at 101 ms. C1 tolerates the
// overlap if w1 learned within DeleteGrace, and C3 the order; the deletion
// of another node excuses neither.
func TestDeletedHeadStampedAfterItsSuccessor(t *testing.T) {
	build := func(deleted string, end int64) History {
		h := &hist{}
		h.acq("w2", 1, 5, 102, 300, 200).acq("w1", 1, 0, 105, end, 100)
		for i := range *h {
			if (*h)[i].Worker == "w1" && (*h)[i].Node != "" {
				(*h)[i].Node = L + "/head"
			}
		}
		h.fault(FaultDeleteNode, deleted, 101, 101)
		return *Analyze(*h)
	}
	ok := build(L+"/head", 106)
	require.Empty(t, CheckExclusion(&ok, cfg))
	require.Empty(t, CheckTokens(&ok))
	late := build(L+"/head", 1500)
	only(t, CheckExclusion(&late, cfg), "C1")
	other := build(L+"/other", 106)
	only(t, CheckExclusion(&other, cfg), "C1")
	only(t, CheckTokens(&other), "C3")
}
