package reliability

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// StoreChecker names the findings in which ZooKeeper itself, not the lock,
// broke its promise: it forgot a write it had acknowledged. They are not
// violations of zklock's guarantees (no lock recipe survives its store
// undoing committed writes; Debian's ZooKeeper 3.8.0 does so across some
// leader changes, ZOOKEEPER-4643, -4646, -4712 and -4785), so a run counts
// them apart (Result.StoreLosses); C2 judges the register's other writes
// as if each forgotten one might not have happened.
const StoreChecker = "ZK"

// writeKey identifies an acknowledged write to a ZooKeeper register.
type writeKey struct {
	lock string
	ver  int32
	zxid int64
}

func keyOf(e Event) writeKey { return writeKey{e.Lock, e.Ver, e.Zxid} }

// version is one version of a ZooKeeper register.
type version struct {
	lock string
	ver  int32
}

// lostWrites finds the acknowledged writes ZooKeeper forgot. The server
// gives each version of a node to one write only, and a client cannot make
// it do otherwise: two acknowledged writes that got the same version mean
// that the one with the lower zxid was undone and the version handed out
// again. Each such write is reported (with the one that got its version
// after it) and returned, so that C2's checks can leave it out or treat it
// as of unknown outcome. Analyze calls it once per history.
func lostWrites(evs []Event) (map[writeKey]bool, []Violation) {
	byVer := map[version][]Event{}
	for _, e := range evs {
		if e.Kind == KindZKWrite && e.OK && e.Ver > 0 { // a written node's version is at least 1; 0: not recorded
			k := version{e.Lock, e.Ver}
			byVer[k] = append(byVer[k], e)
		}
	}
	var keys []version
	for k, ws := range byVer {
		if len(ws) > 1 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].lock != keys[j].lock {
			return keys[i].lock < keys[j].lock
		}
		return keys[i].ver < keys[j].ver
	})
	lost := map[writeKey]bool{}
	var out []Violation
	for _, k := range keys {
		ws := byVer[k]
		sort.Slice(ws, func(i, j int) bool { return ws[i].Zxid < ws[j].Zxid })
		last := ws[len(ws)-1]
		for _, w := range ws[:len(ws)-1] {
			lost[keyOf(w)] = true
			out = append(out, Violation{StoreChecker, fmt.Sprintf(
				"zk register of %s: ZooKeeper forgot an acknowledged write: %s's (token %d, zxid %#x) got version %d, which zxid %#x (%s, token %d) got again %s later",
				w.Lock, w.HoldID(), w.Token, w.Zxid, w.Ver, last.Zxid, last.HoldID(), last.Token, ms(last.T-w.T)), w.T0, last.T})
		}
	}
	return lost, out
}

// PerChecker renders violations per checker, C1..C8 in order and then any
// other checker's, as "C1=2 C3=1" ("" if there are none).
func PerChecker(v map[string]int) string {
	var cs []string
	for _, c := range Checkers {
		if v[c] > 0 {
			cs = append(cs, fmt.Sprintf("%s=%d", c, v[c]))
		}
	}
	var other []string
	for c, n := range v {
		if n > 0 && !slices.Contains(Checkers, c) {
			other = append(other, fmt.Sprintf("%s=%d", c, n))
		}
	}
	sort.Strings(other)
	return strings.Join(append(cs, other...), " ")
}

// Tally sums a run's findings: violations per checker and their total, the
// store's findings apart (StoreChecker: not in the map or the total), and
// ten examples, violations first.
func Tally(vs []Violation) (violations map[string]int, total, storeLosses int, examples []Violation) {
	violations = map[string]int{}
	var store []Violation
	for _, v := range vs {
		if v.Checker == StoreChecker {
			storeLosses++
			store = append(store, v)
			continue
		}
		violations[v.Checker]++
		total++
		if len(examples) < 10 {
			examples = append(examples, v)
		}
	}
	examples = append(examples, store[:min(len(store), 10-len(examples))]...)
	return violations, total, storeLosses, examples
}
