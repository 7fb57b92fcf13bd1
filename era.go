package zklock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/go-zookeeper/zk"
)

// EnsemblePath is the znode that names the ensemble's era: a persistent
// node at the ensemble's root (outside any namespace) whose data is a
// random id, created by the first client that asks for the era and finds it
// missing. An ensemble rebuilt from empty gets a new one, so a fence can
// tell its tokens from the old ensemble's (see the fence package).
const EnsemblePath = "/zklock-ensemble"

// ErrEra is wrapped by the errors of Session.Era and Hold.Era when the era
// cannot be read: the node's data is not an id this package writes, or the
// hold's session ended before the era was read.
var ErrEra = errors.New("zklock: ensemble era unavailable")

// maxEraLen bounds the id read from EnsemblePath: ours are 32 hex digits.
const maxEraLen = 64

// eraCache remembers the era read in one ZooKeeper session: a session
// lives in one ensemble, so its era cannot change under it.
type eraCache struct {
	mu  sync.Mutex
	sid int64
	era string
}

// Era returns the era of the ensemble the session is connected to: the id
// in EnsemblePath, created if missing. It is read once per ZooKeeper
// session and remembered; if the node is deleted, sessions that start
// afterwards create a new era, which every fence then refuses until it is
// rebased onto it. Era fails when not connected, and with an error wrapping
// ErrEra when the node holds something that is not an era.
//
// An ensemble that has no era yet, whose root the session may not create
// nodes in (a locked-down root ACL), has none: Era returns "" and fences
// check tokens alone, as before eras. Create it once with credentials that
// may (`zklock fence era`), or grant CREATE on "/", to turn eras on.
//
// A nil ctx is refused with an error wrapping ErrInvalidArgument.
func (s *Session) Era(ctx context.Context) (string, error) {
	return s.eraIn(ctx, s.conn.SessionID())
}

// Era returns the era of the ensemble that holds the hold's node (see
// Session.Era): what the fence records beside the hold's Token. Once the
// hold's ZooKeeper session has ended it returns the era read during that
// session, if any, and otherwise fails wrapping ErrEra, since an era read
// then could be another ensemble's. A nil ctx is refused with an error
// wrapping ErrInvalidArgument.
func (h *Hold) Era(ctx context.Context) (string, error) {
	if h.unlocked {
		return "", fmt.Errorf("%w: a fail-open hold has no node", ErrEra)
	}
	return h.h.s.eraIn(ctx, h.h.sid)
}

// eraIn returns the era as read within ZooKeeper session sid: the session
// id is the same before and after the read, so the server that answered
// knows that session, and is of the ensemble that created sid's nodes.
func (s *Session) eraIn(ctx context.Context, sid int64) (string, error) {
	if ctx == nil {
		return "", fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	c := &s.era
	c.mu.Lock()
	defer c.mu.Unlock()
	if sid != 0 && c.sid == sid {
		return c.era, nil
	}
	if sid == 0 || s.conn.SessionID() != sid {
		return "", fmt.Errorf("%w: ZooKeeper session 0x%x is not the current one", ErrEra, sid)
	}
	if err := s.waitReady(ctx); err != nil {
		return "", err
	}
	era, err := s.readEra(ctx)
	if err != nil {
		return "", err
	}
	if s.conn.SessionID() != sid {
		return "", fmt.Errorf("%w: ZooKeeper session 0x%x ended while the era was read", ErrEra, sid)
	}
	if era != "" { // "" may change once someone who may creates the era
		c.sid, c.era = sid, era
	}
	return era, nil
}

// readEra reads EnsemblePath, creating it with a fresh id if missing; a
// creation that loses to another client's reads the winner's id.
func (s *Session) readEra(ctx context.Context) (string, error) {
	for range 2 {
		data, _, err := call2(ctx, func() ([]byte, *zk.Stat, error) { return s.conn.Get(EnsemblePath) })
		if err == nil {
			return parseEra(data)
		}
		if !errors.Is(err, zk.ErrNoNode) {
			return "", fmt.Errorf("zklock: read %s: %w", EnsemblePath, err)
		}
		id := make([]byte, 16)
		_, _ = rand.Read(id) // never fails (crypto/rand)
		era := hex.EncodeToString(id)
		_, err = call(ctx, func() (string, error) {
			return s.conn.Create(EnsemblePath, []byte(era), 0, zk.WorldACL(zk.PermRead))
		}, nil)
		if err == nil {
			return era, nil
		}
		if errors.Is(err, zk.ErrNoAuth) {
			return "", nil // no era, and we may not make one: see Session.Era
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return "", fmt.Errorf("zklock: create %s: %w", EnsemblePath, err)
		}
	}
	return "", fmt.Errorf("%w: %s was deleted while it was created", ErrEra, EnsemblePath)
}

// parseEra accepts the ids readEra writes, and other short ids of letters,
// digits, '-' and '_' an operator may have created by hand.
func parseEra(data []byte) (string, error) {
	if len(data) == 0 || len(data) > maxEraLen {
		return "", fmt.Errorf("%w: %s holds %d bytes, not an id of 1 to %d", ErrEra, EnsemblePath, len(data), maxEraLen)
	}
	for _, b := range data {
		if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-' || b == '_') {
			return "", fmt.Errorf("%w: %s holds %q, not an id of letters, digits, '-' and '_'", ErrEra, EnsemblePath, data)
		}
	}
	return string(data), nil
}
