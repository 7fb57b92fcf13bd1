package reliability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Bad input, bounded: FuzzAPI feeds strings (a lock path, a participant id,
// a node name) and a data size to every public entry point that takes them,
// against a live ZooKeeper, on one session that holds a canary lock
// throughout. Per input: no panic; every call returns within its bound (a
// call that outlives fuzzCallBound plus fuzzGrace is a hang); every error
// wraps a zklock sentinel, a go-zookeeper error or the context's; the
// canary hold stays valid and the session never changes state.
//
// `go test ./reliability` runs the seeds and testdata/fuzz/FuzzAPI;
// `go test -run '^$' -fuzz '^FuzzAPI$' -fuzztime 10m ./reliability` (the
// soak, FUZZ_BUDGET) searches for more.

const (
	fuzzCallBound = 500 * time.Millisecond // each blocking call's context
	fuzzGrace     = 2 * time.Second        // beyond its context, a call hangs
	fuzzMaxData   = 2 << 20                // data sizes are taken modulo this
)

// sentinels are the zklock errors a call may wrap.
var sentinels = []error{zklock.ErrLocked, zklock.ErrNotHeld, zklock.ErrLost, zklock.ErrSuspended, zklock.ErrSessionExpired,
	zklock.ErrNodeGone, zklock.ErrNodeDeleted, zklock.ErrReleased, zklock.ErrClosed, zklock.ErrInvalidArgument, zklock.ErrInvalidPath,
	zklock.ErrUpgrade, zklock.ErrResigned, zklock.ErrRevoked, zklock.ErrNoLeader, zklock.ErrRunning, zklock.ErrLatchClosed,
	context.DeadlineExceeded, context.Canceled}

// knownError reports whether err wraps a zklock sentinel, the context's
// error or a go-zookeeper error (their texts begin with "zk: ").
func knownError(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	found := false
	var walk func(error)
	walk = func(e error) {
		if e == nil || found {
			return
		}
		if strings.HasPrefix(e.Error(), "zk: ") {
			found = true
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return found
}

type fuzzEnv struct {
	s      *zklock.Session
	canary *zklock.Hold
	mu     sync.Mutex
	states []string
}

func (f *fuzzEnv) observe(ev zklock.Event) {
	if ev.Kind == zklock.EventState {
		f.mu.Lock()
		f.states = append(f.states, ev.State.String())
		f.mu.Unlock()
	}
}

func (f *fuzzEnv) stateChanges() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.states...)
}

// apiCalls returns the calls of one input, each named; a call returns the
// error it got (nil for success).
func (f *fuzzEnv) apiCalls(path, id, node string, size int) []struct {
	name string
	call func() error
} {
	s := f.s
	data := zklock.WithData(make([]byte, size))
	bound := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), fuzzCallBound)
	}
	hold := func(h *zklock.Hold, err error) error {
		if err != nil {
			return err
		}
		if h == nil {
			return errors.New("nil hold and nil error")
		}
		return h.Release()
	}
	type call = struct {
		name string
		call func() error
	}
	return []call{
		{"ValidatePath", func() error { return zklock.ValidatePath(path) }},
		{"ValidateNamespace", func() error { return zklock.ValidateNamespace(id) }},
		{"Mutex", func() error {
			m, err := zklock.NewMutex(s, path, data)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			if err := hold(m.TryLock(ctx)); err != nil && !errors.Is(err, zklock.ErrLocked) {
				return err
			}
			if _, err := m.Participants(ctx); err != nil {
				return err
			}
			return hold(m.Lock(ctx))
		}},
		{"RWLock", func() error {
			rw, err := zklock.NewRWLock(s, path, data)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			if err := hold(rw.ReadLock().TryLock(ctx)); err != nil && !errors.Is(err, zklock.ErrLocked) {
				return err
			}
			return hold(rw.WriteLock().Lock(ctx))
		}},
		{"Semaphore", func() error {
			sem, err := zklock.NewSemaphore(s, path, 1+size%4, data)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			if _, err := sem.Participants(ctx); err != nil {
				return err
			}
			return hold(sem.TryAcquire(ctx))
		}},
		{"SemaphoreMutex", func() error {
			m, err := zklock.NewSemaphoreMutex(s, path, data)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			return hold(m.Lock(ctx))
		}},
		{"MultiLock", func() error {
			a, err := zklock.NewMutex(s, path, data)
			if err != nil {
				return err
			}
			b, err := zklock.NewMutex(s, "/fuzz/multi-b")
			if err != nil {
				return err
			}
			ml, err := zklock.NewMultiLock(a, b)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			mh, err := ml.Lock(ctx)
			if err != nil {
				return err
			}
			return mh.Release()
		}},
		{"LeaderElection", func() error {
			e, err := zklock.NewLeaderElection(s, path, id)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			if err := hold(e.TryCampaign(ctx)); err != nil && !errors.Is(err, zklock.ErrLocked) {
				return err
			}
			if _, err := e.Participants(ctx); err != nil {
				return err
			}
			if _, err := e.Leader(ctx); err != nil && !errors.Is(err, zklock.ErrNoLeader) {
				return err
			}
			return nil
		}},
		{"LeaderLatch", func() error {
			l, err := zklock.NewLeaderLatch(s, path, id)
			if err != nil {
				return err
			}
			ctx, cancel := bound()
			defer cancel()
			if err := l.Start(ctx); err != nil {
				l.Close()
				return err
			}
			return l.Close()
		}},
		{"Participants", func() error {
			ctx, cancel := bound()
			defer cancel()
			_, err := zklock.Participants(ctx, s, path)
			return err
		}},
		{"ObserveLeader", func() error {
			// It reports leaders until its context ends: a short one, so
			// that every valid input does not cost a whole bound.
			ctx, cancel := context.WithTimeout(context.Background(), fuzzCallBound/5)
			defer cancel()
			ch, err := zklock.ObserveLeader(ctx, s, path)
			if err != nil {
				return err
			}
			for range ch { // closed when ctx ends
			}
			return nil
		}},
		{"Revoke", func() error {
			ctx, cancel := bound()
			defer cancel()
			return zklock.Revoke(ctx, s, node)
		}},
		{"RevokeChild", func() error {
			ctx, cancel := bound()
			defer cancel()
			return zklock.Revoke(ctx, s, strings.TrimSuffix(path, "/")+"/"+node)
		}},
	}
}

func FuzzAPI(f *testing.F) {
	for _, in := range []struct {
		path, id, node string
		size           int
	}{
		{"/fuzz/a", "id", "n", 0},
		{"/fuzz/a", "", "", 1},
		{"", "", "", 0},
		{"/", "/", "/", 0},
		{"relative/path", "a/b", "../x", 10},
		{"/fuzz//b", "id\x00", "/fuzz/a/_c_x-lock-0000000001", 100},
		{"/fuzz/./b", "é", "lock-", 1 << 20},
		{"/fuzz/../b", "\U0001F512", "_c_8a1b2c3d-0000-4000-8000-000000000000-lock-0000000001", 1<<20 + 1},
		{"/zookeeper", "zookeeper", "/zookeeper/quota", 5},
		{"/zookeeper/config", "x", "quota", 0},
		{"/fuzz/\x07bell", "\xff\xfe", "\xff", 3},
		{"/fuzz/" + strings.Repeat("x", 5000), strings.Repeat("i", 5000), strings.Repeat("n", 300), 7},
		{"/fuzz/trailing/", "id", "-lock--2147483648", 1},
		{"/fuzz/big", "id", "n", 1 << 20},
		{"/fuzz/canary", "id", "lease-0000000000", 2}, // contends with the canary: bounded by the context
		{"/fuzz/a b\tc", " ", "\n", 4096},
		{"/fuzz/\xed\xa0\x80", "x", "\u2028", -1}, // a UTF-16 surrogate, CESU-encoded
	} {
		f.Add(in.path, in.id, in.node, in.size)
	}
	c := zktest.Start(f)
	env := &fuzzEnv{}
	s, err := zklock.Connect(c.Servers(), zklock.WithSessionTimeout(10*time.Second), zklock.WithObserver(env.observe))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	env.s = s
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := zklock.NewMutex(s, "/fuzz/canary")
	if err != nil {
		f.Fatal(err)
	}
	if env.canary, err = m.Lock(ctx); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { env.canary.Release() })
	before := len(env.stateChanges())

	f.Fuzz(func(t *testing.T, path, id, node string, size int) {
		if size < 0 {
			size = -(size + 1)
		}
		size %= fuzzMaxData
		for _, c := range env.apiCalls(path, id, node, size) {
			done := make(chan error, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						done <- fmt.Errorf("panic: %v", p)
					}
				}()
				done <- c.call()
			}()
			select {
			case err := <-done:
				if err != nil && strings.HasPrefix(err.Error(), "panic: ") {
					t.Fatalf("%s(%q, %q, %q, %d): %v", c.name, path, id, node, size, err)
				}
				if err != nil && !knownError(err) {
					t.Fatalf("%s(%q, %q, %q, %d): error %q (%T) wraps no zklock sentinel, zk or context error", c.name, path, id, node, size, err, err)
				}
			case <-time.After(fuzzCallBound + fuzzGrace):
				t.Fatalf("%s(%q, %q, %q, %d): no answer after %v: a hang", c.name, path, id, node, size, fuzzCallBound+fuzzGrace)
			}
		}
		if err := env.canary.Err(); err != nil {
			t.Fatalf("after (%q, %q, %q, %d): the canary hold ended: %v", path, id, node, size, err)
		}
		if st := s.State(); st != zklock.StateConnected {
			t.Fatalf("after (%q, %q, %q, %d): session %v", path, id, node, size, st)
		}
		if ch := env.stateChanges()[before:]; len(ch) > 0 {
			t.Fatalf("after (%q, %q, %q, %d): the session changed state: %v", path, id, node, size, ch)
		}
	})
}

func TestKnownError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x: %w", zklock.ErrInvalidPath), true},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("create: %w", errors.New("zk: node does not exist")), true},
		{errors.Join(errors.New("other"), fmt.Errorf("y: %w", errors.New("zk: not authenticated"))), true},
		{errors.New("something else"), false},
		{fmt.Errorf("wrapped: %w", errors.New("no zk: prefix")), false},
	} {
		if got := knownError(tc.err); got != tc.want {
			t.Errorf("knownError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
