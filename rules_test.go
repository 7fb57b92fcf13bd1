package zklock

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// queueOf builds an ordered queue from kinds: "w" a writer (or mutex)
// node, "r" a reader, with increasing sequences.
func queueOf(kinds ...string) []contender {
	cs := make([]contender, len(kinds))
	for i, k := range kinds {
		cs[i] = contender{name: fmt.Sprintf("n%d", i), seq: int32(i + 1), read: k == "r"}
		if k == "r" {
			cs[i].kind = KindRead
		} else {
			cs[i].kind = KindWrite
		}
	}
	return cs
}

func TestRules(t *testing.T) {
	down := queueOf("w", "r", "w")
	down[1].seq = down[0].seq // a downgrade: the read node shares its write node's sequence
	for _, tc := range []struct {
		name  string
		rule  rule
		queue []contender
		ours  int
		holds bool
		watch int
	}{
		{"exclusive head", exclusive, queueOf("w", "w"), 0, true, -1},
		{"exclusive second watches head", exclusive, queueOf("w", "w", "w"), 1, false, 0},
		{"exclusive watches predecessor only", exclusive, queueOf("w", "w", "w", "w"), 3, false, 2},
		{"reader behind readers holds", readDecide(""), queueOf("r", "r", "r"), 2, true, -1},
		{"reader behind a writer waits for it", readDecide(""), queueOf("w", "r"), 1, false, 0},
		{"reader watches the nearest writer", readDecide(""), queueOf("w", "r", "w", "r", "r"), 4, false, 2},
		{"reader ignores its own write node", readDecide("n0"), queueOf("w", "r"), 1, true, -1},
		{"writer behind a reader waits", exclusive, queueOf("r", "w"), 1, false, 0},
		{"view: readers share", rwView, queueOf("r", "r", "w"), 1, true, -1},
		{"view: writer behind readers waits", rwView, queueOf("r", "r", "w"), 2, false, 1},
		{"view: downgraded read and write both hold", rwView, down, 1, true, -1},
		{"view: writer behind a downgrade waits", rwView, down, 2, false, 1},
		{"leases: within the count", leases(2), queueOf("w", "w"), 1, true, -1},
		{"leases: over the count waits on the directory", leases(2), queueOf("w", "w", "w"), 2, false, watchQueue},
		{"leases: every child counts", leases(1), queueOf("w", "w"), 0, false, watchQueue},
		{"lease view: the first n hold", leaseView(2), queueOf("w", "w", "w"), 1, true, -1},
		{"lease view: beyond n waits", leaseView(2), queueOf("w", "w", "w"), 2, false, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			holds, watch := tc.rule(tc.queue, tc.ours)
			require.Equal(t, tc.holds, holds)
			require.Equal(t, tc.watch, watch)
		})
	}
}

// TestRulesNeverWatchBehind: no rule ever names a contender at or behind
// ours (that would deadlock a queue), on every queue of up to 6 nodes.
func TestRulesNeverWatchBehind(t *testing.T) {
	rules := map[string]rule{"exclusive": exclusive, "read": readDecide(""), "view": rwView, "leases": leases(3)}
	for n := 1; n <= 6; n++ {
		for mask := 0; mask < 1<<n; mask++ {
			kinds := make([]string, n)
			for i := range kinds {
				kinds[i] = "w"
				if mask&(1<<i) != 0 {
					kinds[i] = "r"
				}
			}
			cs := queueOf(kinds...)
			for name, r := range rules {
				for ours := range cs {
					holds, w := r(cs, ours)
					if holds {
						continue
					}
					require.True(t, w == watchQueue || w >= 0 && w < ours, "%s %v ours=%d watch=%d", name, kinds, ours, w)
				}
				if holds, _ := r(cs, 0); !holds && name != "leases" {
					t.Fatalf("%s: the head of %v does not hold", name, kinds)
				}
			}
		}
	}
}

// TestSameCreate: nodes of our own acquisition (our protected prefix) in
// the queue are never waited on: the earliest is kept, the others dropped,
// whatever else is queued between them.
func TestSameCreate(t *testing.T) {
	const (
		ours  = "_c_11111111-2222-4333-8444-555555555555-"
		other = "_c_99999999-2222-4333-8444-555555555555-"
	)
	queue := func(names ...string) []contender {
		cs := make([]contender, len(names))
		for i, n := range names {
			cs[i] = contender{name: fmt.Sprintf("%slock-%010d", n, i+1), seq: int32(i + 1)}
		}
		return cs
	}
	for _, tc := range []struct {
		name  string
		queue []contender
		ours  int
		keep  int
		drop  []int
	}{
		{"alone", queue(ours), 0, 0, nil},
		{"others only", queue(other, other, ours), 2, 2, nil},
		{"ours ahead: adopt it", queue(ours, ours), 1, 0, []int{1}},
		{"ours ahead of another's", queue(ours, other, ours), 2, 0, []int{2}},
		{"the earliest of three", queue(other, ours, ours, other, ours), 4, 1, []int{2, 4}},
		{"ours behind: drop it", queue(ours, other, ours), 0, 0, []int{2}},
		{"unprotected name", []contender{{name: "lock-0000000001", seq: 1}, {name: "lock-0000000002", seq: 2}}, 1, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, drop := sameCreate(tc.queue, tc.ours)
			require.Equal(t, tc.keep, keep)
			require.Equal(t, tc.drop, drop)
		})
	}
	usual := queue(other, other, ours)
	require.Zero(t, testing.AllocsPerRun(100, func() { sameCreate(usual, 2) }), "the usual queue allocates nothing")
}

// TestJumpRule: only the waiter right behind the head, in a queue with the
// rule, holds when the node it watches goes.
func TestJumpRule(t *testing.T) {
	for _, tc := range []struct {
		name        string
		jump        bool
		ahead, ours int
		want        bool
	}{
		{"second behind the head", true, 0, 1, true},
		{"third behind the second", true, 1, 2, false},
		{"watching the head from further back", true, 0, 2, false},
		{"further back", true, 4, 5, false},
		{"no rule: second behind the head", false, 0, 1, false},
		{"no rule: further back", false, 1, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, recipe{jump: tc.jump}.jumps(tc.ahead, tc.ours))
		})
	}
}
