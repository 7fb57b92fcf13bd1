package zklock

// Where a hold's fencing token comes from.
//
// A hold's token is its node's czxid: the zxid of the transaction that
// created the node, which ZooKeeper orders totally across the ensemble, so
// a later holder's token is always larger (the node's sequence number is
// not: it is per parent and per creation, and restarts in a recreated
// parent). The czxid is the zxid in the header of the create's reply, so
// the tap (see tapConn) reads it off the byte stream as the reply goes by,
// matching the reply to our create request by xid; go-zookeeper's Create
// returns only the path and it has no Create2, whose reply carries the
// Stat. The create path (create.go) asks for a token with expect before it
// sends the create and collects it with zxid after the create returns; when
// the tap could not read it (the stream did not parse, the reply was lost
// with the connection), the engine reads the node's Stat with Exists.

import (
	"strings"
	"sync"
)

// createTracker matches our create requests (by path) with the zxids of
// their replies, and tells a creator when its request has been written.
type createTracker struct {
	mu      sync.Mutex
	want    map[string]int           // paths of creates we want the zxid of
	xids    map[int32]string         // requests in flight
	zxids   map[string]int64         // zxids of successful replies
	written map[string]chan struct{} // closed when a create of the path is written
	in      map[string]int64         // the session the last create of the path was written in
}

// ourNode marks the paths of our contender nodes (see naming.go): only
// their creates and watches are tracked.
const ourNode = "/_c_"

// expect registers a create of path. The channel it returns is closed when
// the tap sees the create request being written to the connection (never,
// if the request does not parse or is not sent); go-zookeeper writes the
// requests of its send queue one at a time in queue order, so a request
// queued after that is written after the create.
func (t *createTracker) expect(path string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want == nil {
		t.want, t.xids, t.zxids = map[string]int{}, map[int32]string{}, map[string]int64{}
		t.written, t.in = map[string]chan struct{}{}, map[string]int64{}
	}
	t.want[path]++
	ch := t.written[path]
	if ch == nil {
		ch = make(chan struct{})
		t.written[path] = ch
	}
	return ch
}

// forget drops one registration of path (made by expect), and with the
// last one everything known about creates of path.
func (t *createTracker) forget(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path]--; t.want[path] > 0 {
		return
	}
	delete(t.want, path)
	delete(t.zxids, path)
	delete(t.written, path)
	delete(t.in, path)
	for xid, p := range t.xids {
		if p == path {
			delete(t.xids, xid)
		}
	}
}

// sent records a create request of path with the given xid, as the tap
// sees it being written in session sid; creates of paths nobody expects
// are ignored.
func (t *createTracker) sent(xid int32, path string, sid int64) {
	if !strings.Contains(path, ourNode) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.want[path] > 0 {
		t.xids[xid] = path
		t.in[path] = sid
		if ch := t.written[path]; ch != nil {
			close(ch)
			delete(t.written, path)
		}
	}
}

// replied records the reply to request xid: if it answers one of our
// creates and ok (the create succeeded), zxid is the new node's czxid.
func (t *createTracker) replied(xid int32, zxid int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, found := t.xids[xid]; found {
		delete(t.xids, xid)
		if ok {
			t.zxids[p] = zxid
		}
	}
}

// zxid returns the zxid of the last successful reply to a create of path.
func (t *createTracker) zxid(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	z, ok := t.zxids[path]
	return z, ok
}

// writtenIn returns the session the last create of path was written in,
// if the tap saw it written.
func (t *createTracker) writtenIn(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sid, ok := t.in[path]
	return sid, ok
}
