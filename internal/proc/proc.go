// Package proc holds what the test helpers that run servers and peers
// (zktest, zktest/containers, pgtest, peers, bench and the tests) share
// about a child's output and exit: a bounded tail of its output for error
// messages, a buffer of all of it that is safe to read while it is
// written, and a bounded wait for it to end.
package proc

import (
	"bytes"
	"sync"
	"time"
)

// A Tail keeps the last bytes written to it. It is safe for concurrent
// use; make one with NewTail.
type Tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// NewTail returns a Tail that keeps the last max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

// Write keeps p. It never fails, so a chatty child is never blocked by it.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max { // trim seldom: up to 2*max bytes are kept
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

// String returns the last max bytes written (all of them if fewer).
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return string(b)
}

// A Buffer keeps everything written to it, and is safe to read while it is
// written (a child's output, a logger's). The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Wait waits up to d for done to be closed and reports whether it was.
func Wait(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
