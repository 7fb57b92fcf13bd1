package lockview

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"
)

// sessions are the logins of the login form: a random id per login,
// kept here (as its digest) until it expires, is logged out, or the token
// changes. At most max are kept; one more pushes out the one that
// expires first.
type sessions struct {
	ttl time.Duration
	max int

	mu   sync.Mutex
	byID map[[sha256.Size]byte]time.Time // digest of the id → expiry
}

func newSessions(ttl time.Duration, max int) *sessions {
	return &sessions{ttl: ttl, max: max, byID: map[[sha256.Size]byte]time.Time{}}
}

// add starts a session and returns its id and expiry.
func (s *sessions) add() (id string, expires time.Time) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	id = hex.EncodeToString(b[:])
	now := time.Now()
	expires = now.Add(s.ttl)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.byID) >= s.max {
		var first [sha256.Size]byte
		var at time.Time
		for k, exp := range s.byID {
			if !exp.After(now) {
				delete(s.byID, k)
			} else if at.IsZero() || exp.Before(at) {
				first, at = k, exp
			}
		}
		if len(s.byID) >= s.max {
			delete(s.byID, first)
		}
	}
	s.byID[sha256.Sum256([]byte(id))] = expires
	return id, expires
}

// valid reports whether id is a session that has not expired.
func (s *sessions) valid(id string) bool {
	k := sha256.Sum256([]byte(id))
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.byID[k]
	if ok && !exp.After(time.Now()) {
		delete(s.byID, k)
		return false
	}
	return ok
}

// remove ends the session id (logout).
func (s *sessions) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, sha256.Sum256([]byte(id)))
}

// clear ends every session (the token changed).
func (s *sessions) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.byID)
}

// len is the number of sessions kept (expired ones included until seen).
func (s *sessions) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}
