package main

import (
	"fmt"
	"sync"
)

// Store is a single value guarded by fencing tokens: the resource-side rule
// of a lock's fencing token. A write is accepted iff its token is at least
// the highest token the store has seen; the check, the new highest token and
// the value are recorded atomically (under one mutex), so a writer holding a
// stale token (a leader paused past its session, whose successor has already
// written) is refused however late it arrives.
type Store struct {
	mu      sync.Mutex
	highest int64
	value   string
	writer  string
	writes  int
}

// Result is the outcome of one write.
type Result struct {
	Accepted bool
	Highest  int64 // the highest token seen, after this write
	Writes   int   // accepted writes so far
}

// Write applies value from writer under token, by the fencing rule.
func (s *Store) Write(writer string, token int64, value string) Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return Result{Accepted: false, Highest: s.highest, Writes: s.writes}
	}
	s.highest, s.value, s.writer = token, value, writer
	s.writes++
	return Result{Accepted: true, Highest: s.highest, Writes: s.writes}
}

// String describes the store's state.
func (s *Store) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("value=%q writer=%s highest-token=%d writes=%d", s.value, s.writer, s.highest, s.writes)
}
