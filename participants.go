package zklock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// Participant is one contender of a lock, as ZooKeeper shows it.
type Participant struct {
	Node     string // child name
	Path     string // path of the node, without the session's namespace (see WithNamespace)
	Kind     Kind
	Sequence int32
	Token    int64     // czxid: the participant's fencing token if it holds
	Session  int64     // ephemeralOwner: the ZooKeeper session that owns the node
	Ctime    time.Time // when the node was created (its stat's ctime, the server's clock)
	Holds    bool      // by the recipe's rule, this participant holds now
	Waits    string    // the child name of the node it waits for by the rule; "" if it holds
	Data     []byte

	// Err, if not nil, is why the node could not be read: Token, Session,
	// Ctime and Data are then zero. Participants sets it for a node whose
	// ACL this session may not read (wrapping ErrNotAuthorized) and lists
	// the others; an observer's last value carries the error that ended it.
	Err error
}

// Queue orders the children of the lock directory dir (a caller's path) and
// judges them as Participants does, without I/O, so a caller that watches a
// directory can judge each listing itself. Token, Session, Ctime and Data
// are zero (they come from each node's stat); children that are not lock
// nodes are left out; lease nodes (a semaphore's, under path/leases) hold.
func Queue(dir string, children []string) []Participant {
	return participantsOf(dir, sortContenders(children), func(cs []contender, i int) (bool, int) {
		if cs[i].kind == KindLease {
			return true, -1
		}
		return anyRecipe(cs, i)
	})
}

// participantsOf makes the Participants of the ordered contenders cs of
// dir (a caller's path), as decide judges them.
func participantsOf(dir string, cs []contender, decide func([]contender, int) (bool, int)) []Participant {
	out := make([]Participant, len(cs))
	for i, c := range cs {
		holds, w := decide(cs, i)
		out[i] = Participant{Node: c.name, Path: dir + "/" + c.name, Kind: c.kind, Sequence: c.seq, Holds: holds}
		if !holds && w >= 0 {
			out[i].Waits = cs[w].name
		}
	}
	return out
}

// Participants lists the contenders at a lock path whatever the recipe, in
// queue order, as `zklock status` shows them, each judged by its own kind's
// rule (docs/protocol.md#who-holds-and-who-watches-whom), then a
// semaphore's lease nodes (under path/leases) in creation order.
//
// Every lease node holds but the newest of the internal lock's holder, which
// waits if the leases outnumber the count stored in the semaphore's node,
// or, with no count stored, whenever it exists (Curator's rule:
// docs/protocol.md#semaphore). A waiting lease node has Holds false and
// Waits "": it waits for any lease.
func Participants(ctx context.Context, s *Session, path string) ([]Participant, error) {
	if s == nil {
		return nil, fmt.Errorf("%w: nil session", ErrInvalidArgument)
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if err := ValidatePath(path); err != nil {
		return nil, err
	}
	dir := s.FullPath(path)
	ps, err := participants(ctx, s, dir, anyRecipe)
	if err != nil {
		return nil, err
	}
	leases, err := participants(ctx, s, dir+"/leases", func([]contender, int) (bool, int) { return true, -1 })
	if err != nil || len(leases) == 0 {
		return append(ps, leases...), err
	}
	if err := judgeLeases(ctx, s, dir, leases); err != nil {
		return nil, err
	}
	return append(ps, leases...), nil
}

// judgeLeases marks the lease node waiting, if any, of the semaphore at dir
// (a znode path) by Curator's rule (see Participants).
func judgeLeases(ctx context.Context, s *Session, dir string, leases []Participant) error {
	gate, err := participants(ctx, s, dir+"/locks", exclusive)
	if err != nil {
		return err
	}
	if len(gate) == 0 || gate[0].Err != nil {
		return nil // no acquirer under way (or one we cannot see): every lease holds
	}
	waiter := -1
	for i, p := range leases {
		if p.Err == nil && p.Session == gate[0].Session && p.Token > gate[0].Token {
			waiter = i // the newest of the gate holder's nodes created since it took the gate
		}
	}
	if waiter < 0 {
		return nil // its lease node is not created yet
	}
	data, _, err := s.read(ctx, dir)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil
	case err != nil && !permanent(err):
		return fmt.Errorf("zklock: read %s: %w", dir, err)
	}
	if n, cerr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && cerr == nil && len(leases) <= n {
		return nil // counted in: it holds, and is about to leave the gate
	}
	leases[waiter].Holds = false
	return nil
}

// participants lists q's contenders by its rule.
func (q *queue) participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, q.s, q.dir, q.decide)
}

// leader returns the first of q's participants, or ErrNoLeader.
func (q *queue) leader(ctx context.Context) (Participant, error) {
	ps, err := q.participants(ctx)
	if err != nil {
		return Participant{}, err
	}
	if len(ps) == 0 {
		return Participant{}, fmt.Errorf("%w at %s", ErrNoLeader, q.path)
	}
	return ps[0], nil
}

// participants lists dir's contenders in queue order with their data and
// stats, read concurrently; a node that vanishes meanwhile is left out. dir
// is a znode path; the Paths returned are the caller's (no namespace).
func participants(ctx context.Context, s *Session, dir string, decide func([]contender, int) (bool, int)) ([]Participant, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	children, err := s.list(ctx, dir)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if r := refused(err, accessList, dir, "the lock directory"); r != nil {
		return nil, r
	}
	if err != nil {
		return nil, fmt.Errorf("zklock: list %s: %w", dir, err)
	}
	out := participantsOf(s.callerPath(dir), sortContenders(children), decide)
	errs := make([]error, len(out))
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			data, stat, err := s.read(ctx, dir+"/"+out[i].Node)
			if err != nil {
				errs[i] = err
				return
			}
			out[i].setStat(data, stat)
		})
	}
	wg.Wait()
	kept := out[:0]
	for i := range out {
		switch {
		case errs[i] == nil:
			kept = append(kept, out[i])
		case permanent(errs[i]): // unreadable: listed as such
			out[i].Err = refused(errs[i], accessRead, dir+"/"+out[i].Node, "")
			kept = append(kept, out[i])
		case !errors.Is(errs[i], zk.ErrNoNode):
			return nil, fmt.Errorf("zklock: read %s: %w", dir+"/"+out[i].Node, errs[i])
		}
	}
	return kept, nil
}

// setStat fills in what a read of p's node says.
func (p *Participant) setStat(data []byte, stat *zk.Stat) {
	p.Data, p.Token, p.Session, p.Ctime = data, stat.Czxid, stat.EphemeralOwner, time.UnixMilli(stat.Ctime)
}
