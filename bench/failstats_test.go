package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFailoverRecord: the time without a leader, the changes and the
// overlap of one event, from its participants' lines (times in ms).
func TestFailoverRecord(t *testing.T) {
	ms := func(x float64) int64 { return int64(x * float64(time.Millisecond)) }
	ev := func(kind, id string, at float64, state string) fevent {
		return fevent{Ev: kind, ID: id, T: ms(at), State: state}
	}
	heard := func(e fevent, at float64) fevent { e.Heard = ms(at); return e }
	for _, tc := range []struct {
		name     string
		kase     string
		killed   bool
		evs      []fevent
		gap      float64
		changes  int
		overlap  float64
		moved    float64
		endAtEnd float64
		silent   float64
	}{
		{"graceful: the leader's end to the next one's start", caseGraceful, false,
			[]fevent{ev("end", "a", 10, ""), ev("start", "b", 13, ""), ev("left", "a", 14, "")}, 3, 1, 0, -1, 100, -1},
		{"kill9: the kill to the next one's start", caseKill9, true,
			[]fevent{ev("start", "b", 900, "")}, 900, 1, 0, -1, 1000, -1},
		{"follower-restart within the loss limit: no change", caseFollower, false,
			[]fevent{ev("conn", "a", 1, "suspended"), ev("conn", "a", 20, "connected")}, 0, 0, 0, 19, 500, -1},
		{"follower-restart: silent from the last bytes heard to the next connection", caseFollower, false,
			[]fevent{heard(ev("conn", "a", 400, "suspended"), 50), ev("conn", "a", 411, "connected")}, 0, 0, 0, 11, 500, 361},
		{"follower-restart: lost past the loss limit, counted from the last bytes heard", caseFollower, false,
			[]fevent{heard(ev("conn", "a", 660, "suspended"), 2), ev("end", "a", 668, ""), ev("start", "b", 680, ""), ev("conn", "a", 671, "connected")}, 12, 1, 0, 11, 700, 669},
		{"a flap: lost, then led again after the waiter", caseLeaderKill, false,
			[]fevent{ev("conn", "a", 1, "SUSPENDED"), ev("end", "a", 5, ""), ev("start", "b", 30, ""), ev("conn", "a", 40, "RECONNECTED"),
				ev("end", "b", 50, ""), ev("start", "a", 52, "")}, 27, 2, 0, 39, 500, -1},
		{"two leaders at once", caseFollower, false,
			[]fevent{ev("start", "b", 3, ""), ev("end", "a", 5, "")}, 0, 1, 2, -1, 100, -1},
		{"never back: no leader until the event's end", caseLeaderKill, false,
			[]fevent{heard(ev("conn", "a", 10, "suspended"), 5), ev("end", "a", 10, "")}, 90, 0, 0, 90, 100, 95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &failoverRun{cfg: FailoverConfig{SessionTimeout: time.Second}, rep: &FailoverReport{}}
			c := &lchain{v: variant{recipe: recipeZklockElection, loss: "0"}, leader: &fpart{id: "a"}, waiter: &fpart{id: "b"}}
			evs := append([]fevent{ev("start", "x", 1, "")}, tc.evs...) // another chain's line
			r.record(tc.kase, 0, c, evs, 0, ms(tc.endAtEnd), tc.killed, true)
			e := r.rep.Events[0]
			require.InDelta(t, tc.gap, e.GapMs, 1e-6)
			require.Equal(t, tc.changes, e.Changes)
			require.InDelta(t, tc.overlap, e.Overlap, 1e-6)
			require.InDelta(t, tc.moved, e.MovedMs, 1e-6)
			require.InDelta(t, tc.silent, e.SilentMs, 1e-6)
			require.Equal(t, "0ms", e.Loss)
		})
	}
}

// TestFailoverGoals: the failover goals' verdicts, met, not met and
// unresolved.
func TestFailoverGoals(t *testing.T) {
	events := func(kase, recipe, loss string, gaps []float64, changes []int, moved float64) []FailoverEvent {
		var out []FailoverEvent
		for i, g := range gaps {
			out = append(out, FailoverEvent{Case: kase, Recipe: recipe, Loss: loss, Event: i, GapMs: g, Changes: changes[i%len(changes)], MovedMs: moved, Valid: true})
		}
		return out
	}
	silent := func(evs []FailoverEvent, ms float64) []FailoverEvent {
		for i := range evs {
			evs[i].SilentMs = ms
		}
		return evs
	}
	rep := func(evs ...[]FailoverEvent) *FailoverReport {
		f := &FailoverReport{SessionTimeout: time.Second, Tick: 100 * time.Millisecond, LossLimits: []string{"0", "default"}}
		for _, e := range evs {
			f.Events = append(f.Events, e...)
		}
		return f
	}
	n := func(x float64, k int) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = x + float64(i%3)*0.1
		}
		return out
	}
	find := func(gs []goalResult, prefix string) goalResult {
		for _, g := range gs {
			if len(g.Name) >= len(prefix) && g.Name[:len(prefix)] == prefix {
				return g
			}
		}
		t.Fatalf("no goal %q in %v", prefix, gs)
		return goalResult{}
	}
	for _, tc := range []struct {
		name, goal, verdict string
		f                   *FailoverReport
	}{
		{"graceful within 2 ms of the floor", "failover graceful zklock-election median gap - floor's", Met,
			rep(events(caseGraceful, recipeFloor, "", n(4, 12), []int{1}, -1), events(caseGraceful, recipeZklockElection, "0ms", n(5, 12), []int{1}, -1))},
		{"graceful 5 ms behind the floor", "failover graceful zklock-election median gap - floor's", NotMet,
			rep(events(caseGraceful, recipeFloor, "", n(4, 12), []int{1}, -1), events(caseGraceful, recipeZklockElection, "0ms", n(9, 12), []int{1}, -1))},
		{"graceful: too few events", "failover graceful zklock-election median gap - floor's", Unresolved,
			rep(events(caseGraceful, recipeFloor, "", n(4, 3), []int{1}, -1), events(caseGraceful, recipeZklockElection, "0ms", n(9, 3), []int{1}, -1))},
		{"kill9 within a tick of the session timeout", "failover kill9 zklock-election", Met,
			rep(events(caseKill9, recipeZklockElection, "0ms", n(900, 30), []int{1}, -1))},
		{"kill9 late", "failover kill9 zklock-election", NotMet,
			rep(events(caseKill9, recipeZklockElection, "0ms", n(1300, 30), []int{1}, -1))},
		{"follower-restart: no change within the loss limit", "failover follower-restart zklock-latch loss=666ms", Met,
			rep(events(caseFollower, recipeZklockLatch, "666ms", n(0, 30), []int{0}, 20))},
		{"follower-restart: a change within the loss limit", "failover follower-restart zklock-latch loss=666ms", NotMet,
			rep(events(caseFollower, recipeZklockLatch, "666ms", n(0, 30), []int{0, 0, 1}, 20))},
		{"follower-restart: never moved within the loss limit", "failover follower-restart zklock-latch loss=666ms", Unresolved,
			rep(events(caseFollower, recipeZklockLatch, "666ms", n(0, 30), []int{1}, 900))},
		{"follower-restart: moved at once, but silent past the loss limit", "failover follower-restart zklock-latch loss=666ms", Unresolved,
			rep(silent(events(caseFollower, recipeZklockLatch, "666ms", n(0, 30), []int{1}, 11), 670))},
		{"follower-restart: a change within the loss limit, silence counted", "failover follower-restart zklock-latch loss=666ms", NotMet,
			rep(silent(events(caseFollower, recipeZklockLatch, "666ms", n(0, 30), []int{0, 1}, 11), 400))},
		{"follower-restart: the changes were all silent past the limit", "failover follower-restart zklock-latch loss=666ms", Met,
			rep(silent(events(caseFollower, recipeZklockLatch, "666ms", n(0, 20), []int{0}, 11), 300),
				silent(events(caseFollower, recipeZklockLatch, "666ms", n(0, 2), []int{1}, 11), 668))},
		{"leader-kill: no more changes than Curator", "failover leader-kill zklock-latch loss=666ms", Met,
			rep(events(caseLeaderKill, recipeZklockLatch, "666ms", n(500, 30), []int{1}, 900), events(caseLeaderKill, recipeCuratorLatch, "", n(600, 30), []int{1}, 900))},
		{"leader-kill: more changes than Curator", "failover leader-kill zklock-latch loss=666ms", NotMet,
			rep(events(caseLeaderKill, recipeZklockLatch, "666ms", n(500, 30), []int{2}, 900), events(caseLeaderKill, recipeCuratorLatch, "", n(600, 30), []int{1}, 900))},
		{"leader-kill: sometimes more, sometimes fewer", "failover leader-kill zklock-latch loss=666ms", Unresolved,
			rep(events(caseLeaderKill, recipeZklockLatch, "666ms", n(500, 30), []int{0, 2, 1}, 900), events(caseLeaderKill, recipeCuratorLatch, "", n(600, 30), []int{1}, 900))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := find(tc.f.goals(), tc.goal)
			require.Equal(t, tc.verdict, g.Verdict, "%s: %s", g.Name, g.Detail)
		})
	}
}

// TestRecoveryGoals: the goals judged against the ensemble's own recovery
// at leader-kill, per event, and those of the long session timeout.
func TestRecoveryGoals(t *testing.T) {
	// kill builds 10 leader-kill events at loss 0: the ensemble serves at
	// 600 ms, the recipe's session is back at back ms and its leader at gap.
	kill := func(back, gap float64) *FailoverReport {
		f := &FailoverReport{SessionTimeout: time.Second, LossLimits: []string{"0"}}
		for i := range 10 {
			f.Events = append(f.Events,
				FailoverEvent{Case: caseLeaderKill, Recipe: recipeZKElection, Event: i, GapMs: 600, BackMs: -1, Valid: true},
				FailoverEvent{Case: caseLeaderKill, Recipe: recipeZklockElection, Loss: "0ms", Event: i, GapMs: gap, BackMs: back, Changes: 1, Valid: true})
		}
		return f
	}
	long := func(changes int) *FailoverReport {
		f := &FailoverReport{SessionTimeout: time.Second, LossLimits: []string{"0"}}
		f.Events = append(f.Events, FailoverEvent{Case: caseFollower, Recipe: recipeZklockLatch, Loss: "2666ms", Session: "4s", Changes: changes, Valid: true},
			FailoverEvent{Case: caseFollower, Recipe: recipeCuratorLatch, Session: "4s", Changes: 1, Valid: true})
		return f
	}
	verdict := func(f *FailoverReport, prefix string) string {
		for _, g := range f.goals() {
			if strings.HasPrefix(g.Name, prefix) {
				return g.Verdict
			}
		}
		return "none"
	}
	back := "failover leader-kill zklock-election loss=0ms: session back"
	gap := "failover leader-kill zklock-election loss=0ms: gap - the ensemble's"
	change := "failover follower-restart zklock-latch loss=2666ms session=4s: no change"
	require.Equal(t, Met, verdict(kill(640, 690), back))
	require.Equal(t, NotMet, verdict(kill(720, 690), back))
	require.Equal(t, Met, verdict(kill(640, 690), gap))
	require.Equal(t, NotMet, verdict(kill(640, 720), gap))
	require.Equal(t, Met, verdict(long(0), change))
	require.Equal(t, NotMet, verdict(long(1), change))
	require.Equal(t, "none", verdict(long(0), "failover follower-restart curator-latch"), "Curator's changes are not judged")
	overlap := kill(640, 690)
	overlap.Events[1].Overlap = 3
	require.Equal(t, NotMet, verdict(overlap, "failover: no two leaders at once"))
}

// TestFailoverLineCountsChangedEvents: changes= is the number of events
// after which a new term began, as the issue's tables count them ("28 of
// 30"), not the mean number of terms per event.
func TestFailoverLineCountsChangedEvents(t *testing.T) {
	f := &FailoverReport{SessionTimeout: time.Second, LossLimits: []string{"default"}}
	for i, c := range []int{0, 2, 0, 1} {
		f.Events = append(f.Events, FailoverEvent{Case: caseLeaderKill, Recipe: recipeZklockElection, Loss: "666ms", Event: i, GapMs: 10, Changes: c, Valid: true})
	}
	var out strings.Builder
	(&Report{Failover: f}).printFailoverLines(&out)
	require.Equal(t, "FAILOVER leader-kill zklock-election p50=10.00 p99=10.00 changes=2 events=4 loss=666ms\n", out.String())
}
