package lockview

// The wait-for graph over every lock a view knows: which owner holds which
// lock, which waits in which queue, and the cycles among them. How owners
// are told apart, and what the graph cannot see, is in docs/cli.md
// ("Deadlocks").

import (
	"cmp"
	"slices"
	"strings"
)

// A Deadlock is one cycle of the wait-for graph: owners each waiting, in a
// lock's queue, for a node another of them has (holding, or queued ahead),
// so that none can go on until one gives up.
type Deadlock struct {
	Owners []Party  `json:"owners"`
	Locks  []string `json:"locks"` // the locks the cycle goes through, sorted
}

// A Party is one owner in a deadlock: a process (every session whose nodes
// carry its owner id, zklock.WithOwner) or, for nodes without one (Curator,
// kazoo), a single ZooKeeper session.
type Party struct {
	Owner    string   `json:"owner"`             // the owner id, or "session 0x..." for a node without one
	Sessions []string `json:"sessions"`          // its sessions seen in the cycle's locks, sorted
	Clients  []string `json:"clients,omitempty"` // where those sessions connect from, when known (cons)
	Holds    []string `json:"holds,omitempty"`   // the nodes it holds of the cycle's locks
	Waits    []Wait   `json:"waits"`             // what it waits for in the cycle
}

// A Wait is one edge of a cycle: a node of the party queued in Lock behind
// a node of Behind.
type Wait struct {
	Lock   string `json:"lock"`
	Node   string `json:"node"`   // the waiting node
	For    string `json:"for"`    // the node it waits for (holding, or queued ahead); "" for any holder of a semaphore
	Behind string `json:"behind"` // that node's owner
}

// ownerOfNode is the party a node belongs to.
func ownerOfNode(n Node) string {
	if n.Owner != "" {
		return n.Owner
	}
	if n.Session == "" {
		return "node " + n.Path // unreadable: a party of its own
	}
	return "session " + n.Session
}

// edge is one wait of the graph: from's node waits for one of to's nodes
// (all of them must let it through: and) or for any of a set (or).
type edge struct {
	lock     string
	node     Node
	for_     Node
	behind   string
	anyOf    []string // or-waits: the owners of the semaphore's holders
	anyNodes []Node
}

// FindDeadlocks returns the cycles of the wait-for graph of locks (each
// with its whole Queue), in a stable order. A waiting node waits for the
// node it is queued behind (Node.Waits) if it names one, else (a
// semaphore's waiter) for any holder. An owner is stuck when one of its
// waits cannot be let through by owners that can go on; the deadlocks are
// the cycles among the stuck owners (an owner waiting behind its own node in
// another session is a cycle of one).
func FindDeadlocks(locks []Lock) []Deadlock {
	byOwner := map[string][]edge{}
	nodesOf := map[string][]Node{} // every node of an owner, for its sessions and clients
	for _, l := range locks {
		byName := make(map[string]Node, len(l.Queue))
		var holders []Node
		for _, n := range l.Queue {
			byName[n.Name] = n
			if n.Holds {
				holders = append(holders, n)
			}
		}
		for _, n := range l.Queue {
			o := ownerOfNode(n)
			nodesOf[o] = append(nodesOf[o], withLock(n, l.Path))
			if n.Holds {
				continue
			}
			if w, ok := byName[n.Waits]; ok && n.Waits != "" {
				byOwner[o] = append(byOwner[o], edge{lock: l.Path, node: n, for_: w, behind: ownerOfNode(w)})
				continue
			}
			if len(holders) == 0 {
				continue // waits for nothing a view can name: not stuck on a holder
			}
			e := edge{lock: l.Path, node: n}
			for _, h := range holders {
				e.anyOf = append(e.anyOf, ownerOfNode(h))
				e.anyNodes = append(e.anyNodes, h)
			}
			byOwner[o] = append(byOwner[o], e)
		}
	}
	// Owners that can go on: those without waits, then, until nothing
	// changes, those whose every wait is let through by one that can.
	free := map[string]bool{}
	for o := range nodesOf {
		if len(byOwner[o]) == 0 {
			free[o] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for o, es := range byOwner {
			if free[o] || !allThrough(o, es, free) {
				continue
			}
			free[o], changed = true, true
		}
	}
	// The stuck owners' graph, and its strongly connected components.
	stuck := map[string][]string{}
	for o, es := range byOwner {
		if free[o] {
			continue
		}
		for _, e := range es {
			for _, to := range e.targets() {
				if !free[to] {
					stuck[o] = append(stuck[o], to)
				}
			}
		}
	}
	var out []Deadlock
	for _, comp := range components(stuck) {
		if len(comp) == 1 && !slices.Contains(stuck[comp[0]], comp[0]) {
			continue // stuck behind a cycle, not part of one
		}
		out = append(out, deadlockOf(comp, byOwner, nodesOf))
	}
	slices.SortFunc(out, func(a, b Deadlock) int { return cmp.Compare(strings.Join(a.Locks, ","), strings.Join(b.Locks, ",")) })
	return out
}

// withLock is n with its lock's path, for a party's holds.
func withLock(n Node, lock string) Node {
	if n.Path == "" {
		n.Path = lock + "/" + n.Name
	}
	return n
}

// targets are the owners an edge waits for.
func (e edge) targets() []string {
	if e.anyOf != nil {
		return e.anyOf
	}
	return []string{e.behind}
}

// allThrough reports whether every wait of o is let through by free owners:
// its and-waits' owners are free (and not o itself), and each or-wait has
// a free owner.
func allThrough(o string, es []edge, free map[string]bool) bool {
	for _, e := range es {
		if e.anyOf == nil {
			if e.behind == o || !free[e.behind] {
				return false
			}
			continue
		}
		if !slices.ContainsFunc(e.anyOf, func(t string) bool { return t != o && free[t] }) {
			return false
		}
	}
	return true
}

// components returns the strongly connected components of g (Tarjan's),
// each sorted, in a stable order.
func components(g map[string][]string) [][]string {
	var (
		index   = map[string]int{}
		low     = map[string]int{}
		onStack = map[string]bool{}
		stack   []string
		out     [][]string
		next    int
	)
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var comp []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			slices.Sort(comp)
			out = append(out, comp)
		}
	}
	keys := make([]string, 0, len(g))
	for k := range g {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, seen := index[k]; !seen {
			visit(k)
		}
	}
	return out
}

// deadlockOf describes the cycle among the owners comp.
func deadlockOf(comp []string, byOwner map[string][]edge, nodesOf map[string][]Node) Deadlock {
	in := map[string]bool{}
	for _, o := range comp {
		in[o] = true
	}
	var d Deadlock
	locks := map[string]bool{}
	for _, o := range comp {
		p := Party{Owner: o, Waits: []Wait{}}
		for _, e := range byOwner[o] {
			for i, to := range e.targets() {
				if !in[to] {
					continue
				}
				w := Wait{Lock: e.lock, Node: e.node.Name, Behind: to}
				if e.anyOf == nil {
					w.For = e.for_.Name
				} else {
					w.For = e.anyNodes[i].Name
				}
				p.Waits = append(p.Waits, w)
				locks[e.lock] = true
			}
		}
		d.Owners = append(d.Owners, p)
	}
	for i := range d.Owners {
		p := &d.Owners[i]
		for _, n := range nodesOf[p.Owner] {
			lock := strings.TrimSuffix(n.Path, "/"+n.Name)
			if !locks[lock] && !locks[strings.TrimSuffix(strings.TrimSuffix(lock, "/leases"), "/locks")] {
				continue
			}
			if n.Session != "" && !slices.Contains(p.Sessions, n.Session) {
				p.Sessions = append(p.Sessions, n.Session)
			}
			if n.Client != nil {
				if c := clientText(n.Client); c != "" && !slices.Contains(p.Clients, c) {
					p.Clients = append(p.Clients, c)
				}
			}
			if n.Holds {
				p.Holds = append(p.Holds, n.Path)
			}
		}
		slices.Sort(p.Sessions)
		slices.Sort(p.Clients)
		slices.Sort(p.Holds)
	}
	for l := range locks {
		d.Locks = append(d.Locks, l)
	}
	slices.Sort(d.Locks)
	return d
}

// deadlocksLocked is FindDeadlocks over every lock the view knows, with
// the clients' addresses.
func (v *View) deadlocksLocked() []Deadlock {
	locks := make([]Lock, 0, len(v.locks))
	for _, ls := range v.locks {
		if ls.gone.IsZero() && ls.lock.Waiting > 0 {
			l := ls.lock
			l.Queue = v.withClients(l.Queue)
			locks = append(locks, l)
		}
	}
	return FindDeadlocks(locks)
}

// Deadlocks returns the cycles of the wait-for graph over every lock under
// the root (see FindDeadlocks).
func (v *View) Deadlocks() []Deadlock {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.deadlocksLocked()
}
