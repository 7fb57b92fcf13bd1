package lockview

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

// node makes a queue entry: holds, or waits behind the node named waits
// ("" for any holder); data is its id (an owner line, or not).
func node(name, session, data string, holds bool, waits string) Node {
	owner, rest := zklock.OwnerOf([]byte(data)) // as the view reads a node's data
	return Node{Name: name, Session: session, ID: string(rest), Owner: owner, Holds: holds, Waits: waits}
}

func lock(path string, nodes ...Node) Lock {
	for i := range nodes {
		nodes[i].Path = path + "/" + nodes[i].Name
	}
	return Lock{Path: path, Queue: nodes}
}

const (
	ownerA = "10.0.0.1\nzklock-owner=hostA/1/100"
	ownerB = "10.0.0.2\nzklock-owner=hostB/2/200"
)

func TestFindDeadlocks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		locks  []Lock
		owners [][]string // each deadlock's owners
	}{
		{"none", []Lock{lock("/a", node("n1", "0x1", ownerA, true, ""), node("n2", "0x2", ownerB, false, "n1"))}, nil},
		{"opposite order, sessions joined by owner", []Lock{
			lock("/a", node("a1", "0x1", ownerA, true, ""), node("a2", "0x4", ownerB, false, "a1")),
			lock("/b", node("b1", "0x3", ownerB, true, ""), node("b2", "0x2", ownerA, false, "b1")),
		}, [][]string{{"hostA/1/100", "hostB/2/200"}}},
		{"opposite order, sessions without owners", []Lock{
			lock("/a", node("a1", "0x1", "c1", true, ""), node("a2", "0x2", "c2", false, "a1")),
			lock("/b", node("b1", "0x2", "c2", true, ""), node("b2", "0x1", "c1", false, "b1")),
		}, [][]string{{"session 0x1", "session 0x2"}}},
		{"without owners, two sessions of one process are two parties: no cycle", []Lock{
			lock("/a", node("a1", "0x1", "c", true, ""), node("a2", "0x2", "c", false, "a1")),
		}, nil},
		{"nested: one owner waits behind itself", []Lock{
			lock("/a", node("a1", "0x1", ownerA, true, ""), node("a2", "0x2", ownerA, false, "a1")),
		}, [][]string{{"hostA/1/100"}}},
		{"a third waiting behind the cycle is not in it", []Lock{
			lock("/a", node("a1", "0x1", ownerA, true, ""), node("a2", "0x2", ownerB, false, "a1"), node("a3", "0x9", "x", false, "a2")),
			lock("/b", node("b1", "0x2", ownerB, true, ""), node("b2", "0x1", ownerA, false, "b1")),
		}, [][]string{{"hostA/1/100", "hostB/2/200"}}},
		{"semaphore: a free holder lets the waiter through", []Lock{
			lock("/s", node("l1", "0x1", ownerA, true, ""), node("l2", "0x7", "free", true, ""), node("w", "0x2", ownerB, false, "")),
			lock("/b", node("b1", "0x2", ownerB, true, ""), node("b2", "0x1", ownerA, false, "b1")),
		}, nil},
		{"semaphore: every holder stuck", []Lock{
			lock("/s", node("l1", "0x1", ownerA, true, ""), node("w", "0x2", ownerB, false, "")),
			lock("/b", node("b1", "0x2", ownerB, true, ""), node("b2", "0x1", ownerA, false, "b1")),
		}, [][]string{{"hostA/1/100", "hostB/2/200"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := FindDeadlocks(tc.locks)
			var got [][]string
			for _, d := range ds {
				var os []string
				for _, p := range d.Owners {
					os = append(os, p.Owner)
					require.NotEmpty(t, p.Waits, "every party of a cycle waits")
					require.NotEmpty(t, p.Sessions)
				}
				got = append(got, os)
				require.NotEmpty(t, d.Locks)
			}
			require.Equal(t, tc.owners, got)
		})
	}
	ds := FindDeadlocks([]Lock{
		lock("/a", node("a1", "0x1", ownerA, true, ""), node("a2", "0x4", ownerB, false, "a1")),
		lock("/b", node("b1", "0x3", ownerB, true, ""), node("b2", "0x2", ownerA, false, "b1")),
	})
	require.Equal(t, []string{"/a", "/b"}, ds[0].Locks)
	a := ds[0].Owners[0]
	require.Equal(t, []string{"0x1", "0x2"}, a.Sessions)
	require.Equal(t, []string{"/a/a1"}, a.Holds)
	require.Equal(t, []Wait{{Lock: "/b", Node: "b2", For: "b1", Behind: "hostB/2/200"}}, a.Waits)
}
