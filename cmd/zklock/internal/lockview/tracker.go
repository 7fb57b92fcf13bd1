package lockview

import (
	"errors"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// spawnLocked starts the goroutine that watches the znode p, unless one
// does or MaxDirs are watched below the root (the root is one more).
func (v *View) spawnLocked(p string) bool {
	if _, ok := v.dirs[p]; ok {
		return true
	}
	if len(v.dirs) > v.cfg.MaxDirs && p != v.root {
		return false
	}
	v.dirs[p] = &dir{path: p, nodes: map[string]*nodeStat{}, subs: map[string]bool{}}
	v.pending++
	v.wg.Go(func() { v.track(p) })
	return true
}

// listedLocked counts d's first listing (or its removal before one).
func (v *View) listedLocked(d *dir) {
	d.listed = true
	if d.counted {
		return
	}
	d.counted = true
	v.pending--
	if v.pending == 0 && !v.isReady {
		v.isReady = true
		close(v.ready)
	}
}

// maxListings bounds the listings in flight across the view: a walk of
// thousands of directories queues its requests here, not all at once in
// go-zookeeper, where each would count against RequestTimeout and hold its
// reply until its goroutine runs.
const maxListings = 64

// track keeps the znode p listed: it lists p with a children watch, reads
// the lock nodes it has not read yet, publishes the result and waits for
// the watch. A missing p ends it (the root's waits for its creation). At
// most maxListings listings are in flight.
func (v *View) track(p string) {
	backoff := 250 * time.Millisecond
	for v.waitConnected() {
		var (
			children []string
			stat     *zk.Stat
			ch       <-chan zk.Event
		)
		select {
		case v.lists <- struct{}{}:
		case <-v.ctx.Done():
			return
		}
		err := v.request(func() (err error) {
			children, stat, ch, err = v.s.Conn().ChildrenW(p)
			return err
		})
		<-v.lists
		switch {
		case isNoNode(err) && p == v.root:
			if v.rootMissing() {
				continue
			}
			return
		case isNoNode(err):
			v.remove(p)
			return
		case err != nil:
			v.failed(p, err)
			select {
			case <-time.After(backoff):
				backoff = min(2*backoff, 5*time.Second)
				continue
			case <-v.ctx.Done():
				return
			}
		}
		backoff = 250 * time.Millisecond
		data := v.readData(p, stat)
		reads := v.readNodes(p, children, data)
		v.update(p, children, *stat, data, reads)
		select {
		case <-ch: // any event, NotWatching included (the session expired): list again
		case <-v.ctx.Done():
			return
		}
	}
}

// rootMissing marks the root absent and waits for its creation; false if
// the view closed first.
func (v *View) rootMissing() bool {
	var (
		ok bool
		ch <-chan zk.Event
	)
	err := v.request(func() (err error) {
		ok, _, ch, err = v.s.Conn().ExistsW(v.root)
		return err
	})
	v.mu.Lock()
	v.rootGone = err == nil && !ok
	if d := v.dirs[v.root]; d != nil {
		d.problem = ""
		if err != nil {
			d.problem = "cannot read " + v.cfg.Root + ": " + err.Error()
		}
		v.listedLocked(d)
	}
	v.notifyLocked()
	v.mu.Unlock()
	if err != nil {
		select {
		case <-time.After(time.Second):
			return true
		case <-v.ctx.Done():
			return false
		}
	}
	select {
	case <-ch:
		return true
	case <-v.ctx.Done():
		return false
	}
}

// readData reads p's data if it is short enough to be a lease count.
func (v *View) readData(p string, stat *zk.Stat) []byte {
	if stat.DataLength <= 0 || stat.DataLength > 20 {
		return nil
	}
	var data []byte
	if err := v.request(func() (err error) {
		data, _, err = v.s.Conn().Get(p)
		return err
	}); err != nil {
		return nil
	}
	return data
}

// kazooLease matches kazoo's Semaphore lease nodes: a 32-digit hex uuid.
var kazooLease = regexp.MustCompile(`^[0-9a-f]{32}$`)

// leaseCount parses a stored lease count: a decimal number.
func leaseCount(data []byte) int {
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// lockNodes returns the children of p that are lock nodes, in queue order,
// and says whether they are kazoo Semaphore leases (p's data is a lease
// count and every child is named as kazoo names them).
func lockNodes(children []string, data []byte) ([]string, bool) {
	if leaseCount(data) > 0 && len(children) > 0 && !slices.ContainsFunc(children, func(c string) bool { return !kazooLease.MatchString(c) }) {
		return slices.Sorted(slices.Values(children)), true
	}
	q := zklock.Queue("/", children)
	names := make([]string, len(q))
	for i, n := range q {
		names[i] = n.Node
	}
	return names, false
}

// maxReads bounds the lock node reads in flight across the view: each
// holds a node's whole data (up to ZooKeeper's jute.maxbuffer, 1 MB by
// default) until its first MaxIDBytes are kept.
const maxReads = 16

// readNodes reads the lock nodes of p not read yet, up to MaxDetail in
// queue order, at most maxReads at a time in the view. A node gone
// meanwhile is left out.
func (v *View) readNodes(p string, children []string, data []byte) map[string]*nodeStat {
	names, _ := lockNodes(children, data)
	names = names[:min(len(names), v.cfg.MaxDetail)]
	v.mu.Lock()
	var todo []string
	if d := v.dirs[p]; d != nil {
		for _, n := range names {
			if d.nodes[n] == nil {
				todo = append(todo, n)
			}
		}
	}
	v.mu.Unlock()
	out := make(map[string]*nodeStat, len(todo))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, n := range todo {
		select {
		case v.reads <- struct{}{}:
		case <-v.ctx.Done():
			wg.Wait()
			return out
		}
		wg.Go(func() {
			defer func() { <-v.reads }()
			var (
				b  []byte
				st *zk.Stat
			)
			err := v.request(func() (err error) {
				b, st, err = v.s.Conn().Get(path.Join(p, n))
				return err
			})
			ns := &nodeStat{denied: deniedReason(err)}
			switch {
			case err == nil:
				owner, rest := zklock.OwnerOf(b) // the id is the data's; the owner line is zklock's own
				id, cut := dataText(rest)
				ns = &nodeStat{id: id, owner: owner, size: st.DataLength, cut: cut, ctime: time.UnixMilli(st.Ctime), czxid: st.Czxid, sid: st.EphemeralOwner}
			case ns.denied == "":
				return // gone, or no answer: read again at the next listing
			}
			mu.Lock()
			out[n] = ns
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// maxNested bounds the children of a lock directory that are not lock
// nodes and are still walked (a lock nested in another's directory).
// Past it they are only counted: a lock directory with 100,000 other
// children would otherwise cost a listing and a watch each.
const maxNested = 100

// update records a listing of p and what was read of its new nodes,
// starts watching its children that are not lock nodes (in name order,
// while MaxDirs allows; those of a lock directory only if at most
// maxNested), and judges the lock it belongs to.
func (v *View) update(p string, children []string, stat zk.Stat, data []byte, reads map[string]*nodeStat) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := v.dirs[p]
	if d == nil {
		return
	}
	d.children, d.stat, d.data, d.problem, d.listed = children, stat, data, "", true
	if p == v.root {
		v.rootGone = false
	}
	names, _ := lockNodes(children, data)
	isNode := make(map[string]bool, len(names))
	for _, n := range names {
		isNode[n] = true
	}
	for n := range d.nodes {
		if !isNode[n] {
			delete(d.nodes, n)
		}
	}
	for n, st := range reads {
		if isNode[n] {
			d.nodes[n] = st
		}
	}
	others := len(children) - len(names)
	d.unwatched = 0
	if others > 0 && (len(names) == 0 && v.locks[v.callerPath(p)] == nil || others <= maxNested) {
		var todo []string
		for _, c := range children {
			if !isNode[c] && !d.subs[c] {
				todo = append(todo, c)
			}
		}
		slices.Sort(todo)
		for i, c := range todo {
			if !v.spawnLocked(path.Join(p, c)) {
				d.unwatched = len(todo) - i // MaxDirs are watched
				break
			}
			d.subs[c] = true
		}
	}
	v.judgeLocked(p)
	if b := path.Base(p); (b == "leases" || b == "locks") && p != v.root {
		v.judgeLocked(path.Dir(p)) // a semaphore's leases or locks changed
	}
	v.listedLocked(d)
	v.notifyLocked()
}

// remove forgets p, which no longer exists.
func (v *View) remove(p string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	d := v.dirs[p]
	if d == nil {
		return
	}
	v.listedLocked(d)
	delete(v.dirs, p)
	if parent := v.dirs[path.Dir(p)]; parent != nil {
		delete(parent.subs, path.Base(p))
	}
	v.judgeLocked(p)
	v.judgeLocked(path.Dir(p))
	v.notifyLocked()
}

// failed records that p could not be listed (it counts as listed for
// Ready, so that one unreadable directory does not hold up the rest); its
// goroutine retries.
func (v *View) failed(p string, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d := v.dirs[p]; d != nil {
		v.listedLocked(d)
		d.problem = "cannot list " + v.callerPath(p) + ": " + err.Error()
		if ls := v.locks[v.callerPath(p)]; ls != nil {
			ls.lock.Problem = d.problem
		}
	}
	v.notifyLocked()
}

// deniedReason is why a read that failed with err will keep failing (an
// ACL, refused credentials), "" if it may succeed later.
func deniedReason(err error) string {
	switch {
	case errors.Is(err, zk.ErrNoAuth):
		return "not authorized: its ACL does not let this session READ it"
	case errors.Is(err, zk.ErrAuthFailed):
		return "not authorized: the session's credentials were rejected"
	}
	return ""
}
