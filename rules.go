package zklock

// What a recipe tells the engine (recipe), and the recipes' rules: given
// the queue in order and our place in it, whether our node holds and, if
// not, what to wait for. They do no I/O, so they are tested on hand-made
// queues (rules_test.go).

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// recipe is what a recipe tells the engine about its queue; each setting's
// zero value is the plain exclusive queue's.
type recipe struct {
	mark     string // our node-name marker (lock-, __READ__, __WRIT__, lease-, latch-)
	decide   rule   // when our node holds (below)
	read     bool   // our nodes share with other readers
	jump     bool   // the jump rule (recipe.jumps) and the in-process handoff (handoff.go)
	countAll bool   // every child counts, contender or not, as a Curator semaphore counts its leases
	confirm  bool   // a hold's node is read again before it is returned (CURATOR-696)
	internal bool   // the library's own queue: its holds send no watch of their own and report no events
	fixed    string // names our node exactly, ephemeral but not sequential (a downgrade's read node)
	token    int64  // if nonzero, the holds' fencing token in place of their node's czxid (a downgrade's)
}

// A rule decides for the contender at index ours of the ordered queue cs:
// holds, or the index of the one contender to wait for, or watchQueue to
// wait for any change of the directory.
type rule func(cs []contender, ours int) (holds bool, watch int)

// watchQueue is a rule's answer "wait until the directory changes": a
// semaphore's leases may be returned in any order.
const watchQueue = -2

// exclusive is the rule of a mutex, a write lock, a leader election and a
// latch: hold at the head of the queue, otherwise watch the immediate
// predecessor.
func exclusive(_ []contender, ours int) (bool, int) {
	if ours == 0 {
		return true, -1
	}
	return false, ours - 1
}

// jumps is the jump rule: whether, in a queue that has it (recipe.jump),
// our node at index ours holds as soon as the node it watches, at index
// ahead, goes, without a listing. It does when that node is the head and
// ours the one right behind it: nothing can be queued between them, so ours
// is first once the head goes. A waiter further back relists instead, since
// the node it watched may have given up behind a holder. Caution: ours holds
// only while our session is the one that created it (see waiter.takeOver).
func (r recipe) jumps(ahead, ours int) bool {
	return r.jump && (ahead == 0 && ours == 1 || negTrustWatch) // negTrustWatch: test-only
}

// leases is a semaphore's rule, Curator's: a lease node holds while the
// directory has at most n children, ours included (every child counts;
// leases are unordered, so the wait is for any of them to go).
func leases(n int) rule {
	return func(cs []contender, ours int) (bool, int) {
		if len(cs) <= n {
			return true, -1
		}
		return false, watchQueue
	}
}

// leaseView is Semaphore.Participants' view: the first n lease nodes, in
// creation order, hold (lease creation is serialised by the internal lock).
func leaseView(n int) rule {
	return func(_ []contender, i int) (bool, int) { return i < n, -1 }
}

// anyRecipe decides for a directory of mixed kinds, as `zklock status`
// shows it: readers share until a node of another kind is ahead of them;
// everything else is exclusive. A read node and a write node with the same
// sequence (a read-write lock's downgrade) both hold; see rwView.
func anyRecipe(cs []contender, ours int) (bool, int) { return rwView(cs, ours) }

// readDecide is a reader's rule: it holds iff no writer (any contender that
// is not a reader) is queued ahead of it, and otherwise watches the nearest
// one. own names the write node a downgraded reader came from, which shares
// its sequence but does not block it.
func readDecide(own string) rule {
	return func(cs []contender, ours int) (bool, int) {
		for i := ours - 1; i >= 0; i-- {
			if !cs[i].read && cs[i].name != own {
				return false, i
			}
		}
		return true, -1
	}
}

// rwView says who holds in a read-write directory as an observer sees it: a
// writer holds at the head of the queue, a reader while no writer is ahead,
// and a read node and a write node with the same sequence (a downgrade,
// ours or Curator 5.5's) do not block each other, whichever sorts first.
func rwView(cs []contender, ours int) (bool, int) {
	me := cs[ours]
	for i := ours - 1; i >= 0; i-- {
		if cs[i].seq == me.seq || (me.read && cs[i].read) {
			continue
		}
		return false, i
	}
	return true, -1
}

// sameCreate finds the other nodes of our acquisition in cs, ours at index
// ours: those with our node's protected prefix, made by earlier attempts of
// our create whose replies were lost. keep is the earliest of them, where
// the acquisition stands (to adopt, never to wait on); drop the others. See
// docs/protocol.md#protected-mode-creates-and-lost-replies.
func sameCreate(cs []contender, ours int) (keep int, drop []int) {
	prefix, ok := protectedOf(cs[ours].name)
	if !ok || negWaitOwn { // negWaitOwn: test-only (negative_off.go)
		return ours, nil
	}
	keep = -1
	for i := range cs {
		switch {
		case i != ours && !strings.HasPrefix(cs[i].name, prefix):
		case keep < 0:
			keep = i
		default:
			drop = append(drop, i)
		}
	}
	return keep, drop
}

// protectedOf returns the protected prefix ("_c_", a UUID, "-") that name
// starts with.
func protectedOf(name string) (string, bool) {
	const n = len("_c_") + 36 + 1
	if len(name) <= n || !strings.HasPrefix(name, "_c_") || name[n-1] != '-' {
		return "", false
	}
	return name[:n], true
}

// Node-name markers: the text before a node's sequence number. Ours are
// Curator's; kazoo's are recognised so that its nodes count as contenders.
const (
	markLock   = "lock-"     // Curator InterProcessMutex, LeaderSelector; go-zookeeper's Lock
	markRead   = "__READ__"  // Curator read lock
	markWrite  = "__WRIT__"  // Curator write lock
	markLease  = "lease-"    // Curator SemaphoreV2 lease
	markLatch  = "latch-"    // Curator LeaderLatch
	markKLock  = "__lock__"  // kazoo Lock and WriteLock
	markKRLock = "__rlock__" // kazoo ReadLock
)

// Kind is what a contender in a lock directory is, judged by its name.
type Kind string

// Kinds of participants, as `zklock status` prints them.
const (
	KindLock    Kind = "lock"    // an exclusive mutex node (Curator, go-zookeeper, zklock)
	KindRead    Kind = "read"    // a read-lock node
	KindWrite   Kind = "write"   // a write-lock node
	KindLease   Kind = "lease"   // a semaphore lease
	KindLatch   Kind = "latch"   // a LeaderLatch participant
	KindForeign Kind = "foreign" // another library's node that still counts (kazoo's)
)

var markers = []struct {
	mark string
	kind Kind
}{
	{markLock, KindLock}, {markRead, KindRead}, {markWrite, KindWrite},
	{markLease, KindLease}, {markLatch, KindLatch},
	{markKLock, KindForeign}, {markKRLock, KindForeign},
}

// contender is one child of a lock directory that takes part in the queue.
type contender struct {
	name string
	kind Kind
	seq  int32
	read bool // shares with other readers (Curator __READ__, kazoo __rlock__)
}

// parseContender reads a child name: it counts if, after the last occurrence
// of a known marker, it ends in a ZooKeeper sequence number, as Curator
// keys its own nodes (see docs/protocol.md#node-names).
func parseContender(name string) (contender, bool) {
	best, bestAt := contender{}, -1
	for _, m := range markers {
		i := strings.LastIndex(name, m.mark)
		if i < 0 || i <= bestAt {
			continue
		}
		seq, ok := parseSeq(name[i+len(m.mark):])
		if !ok {
			continue
		}
		best, bestAt = contender{name: name, kind: m.kind, seq: seq}, i
		best.read = m.mark == markRead || m.mark == markKRLock
	}
	return best, bestAt >= 0
}

// parseSeq parses a sequence suffix: 10 digits, or a minus sign and 9 or 10.
func parseSeq(s string) (int32, bool) {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) < 9 || len(digits) > 10 || (digits == s && len(digits) != 10) {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil
}

// seqCompare orders sequence numbers by serial-number arithmetic (RFC 1982),
// so a node after the counter's wrap still comes last.
func seqCompare(a, b int32) int {
	d := b - a // wraps, by design
	switch {
	case d == 0:
		return 0
	case d > 0:
		return -1
	}
	return 1
}

// sortContenders parses and orders a directory listing; children that are
// not contenders are left out. Equal sequences (a Curator 5.5 downgrade read
// node shares its write node's sequence) are ordered by name.
func sortContenders(children []string) []contender {
	cs := make([]contender, 0, len(children))
	for _, name := range children {
		if c, ok := parseContender(name); ok {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b contender) int {
		if c := seqCompare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	if negStringSort { // test-only (negative_off.go)
		slices.SortFunc(cs, func(a, b contender) int { return cmp.Compare(a.name, b.name) })
	}
	return cs
}

func indexOf(cs []contender, name string) int {
	for i := range cs {
		if cs[i].name == name {
			return i
		}
	}
	return -1
}

// contenders orders a listing for a rule; with countAll, children that are
// not contenders come first, as holders (a Curator semaphore counts them).
func contenders(children []string, countAll bool) []contender {
	cs := sortContenders(children)
	if countAll && len(cs) < len(children) {
		foreign := make([]contender, 0, len(children))
		for _, name := range children {
			if _, ok := parseContender(name); !ok {
				foreign = append(foreign, contender{name: name, kind: KindForeign})
			}
		}
		cs = append(foreign, cs...)
	}
	return cs
}
