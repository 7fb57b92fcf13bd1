package zklock

// The recipes' rules: given the queue in order and our place in it, whether
// our node holds and, if not, what to wait for. They do no I/O, so they are
// tested on hand-made queues (rules_test.go).

import "strings"

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

// readDecide is a reader's decision: it holds iff no writer (any contender
// that is not a reader) is queued ahead of it, and otherwise watches the
// nearest such writer. own names the write node this reader downgraded from,
// or is empty: that node shares the reader's sequence and, sorting by name,
// may come first, but it is our own hold, so it does not block us. No other
// node can share a sequence with ours: ZooKeeper never reuses one within a
// directory, and only a downgrade creates a node with a chosen sequence,
// always its own write node's.
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

// sameCreate finds the other nodes of our acquisition in the ordered queue
// cs, ours being at index ours: the contenders that carry our node's
// protected prefix. The prefix is drawn afresh for each acquisition
// (create.go), so they were made by earlier attempts of our own create
// whose replies were lost, and which a search did not find (a lagging
// server listed the directory without them). keep is where the acquisition
// stands: the earliest of its nodes, which is ours unless one is queued
// ahead of it; drop lists the others. A node ahead of ours is ours to
// adopt, never to wait on: the wait would be on ourselves. The usual queue,
// with no such node, allocates nothing.
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
