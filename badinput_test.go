package zklock_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// stateLog records a session's state changes after it connected.
type stateLog struct {
	mu     sync.Mutex
	states []zklock.State
}

func (l *stateLog) observe(ev zklock.Event) {
	if ev.Kind == zklock.EventState {
		l.mu.Lock()
		l.states = append(l.states, ev.State)
		l.mu.Unlock()
	}
}

func (l *stateLog) since(n int) []zklock.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]zklock.State(nil), l.states[n:]...)
}

func (l *stateLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.states)
}

// constructors builds every recipe at p on s, returning the first error.
func constructors(s *zklock.Session, p string, opts ...zklock.Option) map[string]error {
	_, em := zklock.NewMutex(s, p, opts...)
	_, erw := zklock.NewRWLock(s, p, opts...)
	_, es := zklock.NewSemaphore(s, p, 2, opts...)
	_, esm := zklock.NewSemaphoreMutex(s, p, opts...)
	_, ee := zklock.NewLeaderElection(s, p, "id", opts...)
	return map[string]error{"mutex": em, "rwlock": erw, "semaphore": es, "semaphore-mutex": esm, "election": ee}
}

// TestIntegration_BadPathHarmsNothing: paths ZooKeeper would refuse, or
// whose requests could not fit in its jute.maxbuffer, are refused at
// construction; the session then locks as before and never changes state.
func TestIntegration_BadPathHarmsNothing(t *testing.T) {
	c := zktest.Start(t)
	var log stateLog
	s := connect(t, c, zklock.WithObserver(log.observe))
	seen := log.len()
	bad := map[string]string{
		"1 MiB":        "/locks/" + strings.Repeat("x", 1<<20),
		"reserved":     "/zookeeper/locks",
		"reserved-top": "/zookeeper",
		"empty":        "/a//b",
		"dot":          "/a/./b",
		"dotdot":       "/a/../b",
		"nul":          "/a/b\x00c",
		"control":      "/a/b\x07",
		"surrogate":    "/a/\U0001F512",
	}
	for name, p := range bad {
		for recipe, err := range constructors(s, p) {
			require.ErrorIs(t, err, zklock.ErrInvalidArgument, "%s %s", name, recipe)
			require.ErrorIs(t, err, zklock.ErrInvalidPath, "%s %s", name, recipe)
		}
		_, err := zklock.Participants(ctxTimeout(t, time.Second), s, p)
		require.ErrorIs(t, err, zklock.ErrInvalidPath, name)
		require.ErrorIs(t, zklock.Revoke(ctxTimeout(t, time.Second), s, p), zklock.ErrInvalidArgument, name)
	}
	// Data too large for one create is refused too, whatever the recipe.
	for recipe, err := range constructors(s, "/locks/big-data", zklock.WithData(make([]byte, 1<<20))) {
		if recipe != "election" { // its id is its data
			require.ErrorIs(t, err, zklock.ErrInvalidArgument, recipe)
		}
	}
	_, err := zklock.NewLeaderElection(s, "/locks/big-id", strings.Repeat("i", 1<<20))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	m := newMutex(t, s, "/locks/after-bad-input")
	for range 5 {
		h, err := m.Lock(ctxTimeout(t, 5*time.Second))
		require.NoError(t, err)
		require.NoError(t, h.Release())
	}
	require.Empty(t, log.since(seen), "the session changed state")
	require.Equal(t, zklock.StateConnected, s.State())
}

// TestIntegration_ServerRefusalEndsOnlyItsCall: an error the server answers
// that no retry can fix (here: no permission to create under a parent) ends
// the acquire at once with that error, and a hold on the same session is
// unharmed.
func TestIntegration_ServerRefusalEndsOnlyItsCall(t *testing.T) {
	c := zktest.Start(t)
	var log stateLog
	s := connect(t, c, zklock.WithObserver(log.observe))
	_, err := s.Conn().Create("/readonly", nil, 0, zk.WorldACL(zk.PermRead))
	require.NoError(t, err)
	held, err := newMutex(t, s, "/locks/unharmed").Lock(ctxTimeout(t, 5*time.Second))
	require.NoError(t, err)
	seen := log.len()

	for _, lock := range []func(context.Context) (*zklock.Hold, error){
		newMutex(t, s, "/readonly/lock").Lock,
		newMutex(t, s, "/readonly/lock").TryLock,
		newSemMutex(t, s, "/readonly/sem").Lock,
		newRW(t, s, "/readonly/rw").WriteLock().Lock,
	} {
		start := time.Now()
		h, err := lock(ctxTimeout(t, 30*time.Second))
		require.Nil(t, h)
		require.ErrorIs(t, err, zk.ErrNoAuth)
		require.Less(t, time.Since(start), 10*time.Second, "a refusal must not be retried until the deadline")
	}
	require.NoError(t, held.Err())
	require.Empty(t, log.since(seen))
	require.NoError(t, held.Release())
}

// TestIntegration_NilContextAndClosedSession: a nil context is
// ErrInvalidArgument everywhere, and every operation on a closed session,
// the Try forms included, fails with ErrClosed, without waiting.
func TestIntegration_NilContextAndClosedSession(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	m := newMutex(t, s, "/locks/closed")
	rw := newRW(t, s, "/locks/closed-rw")
	sem := newSemaphore(t, s, "/locks/closed-sem", 2)
	sm := newSemMutex(t, s, "/locks/closed-sm")
	e, err := zklock.NewLeaderElection(s, "/locks/closed-leader", "id")
	require.NoError(t, err)
	ml := newMulti(t, m, rw.WriteLock())

	ops := map[string]func(context.Context) error{
		"Mutex.Lock":                 func(ctx context.Context) error { _, err := m.Lock(ctx); return err },
		"Mutex.TryLock":              func(ctx context.Context) error { _, err := m.TryLock(ctx); return err },
		"Mutex.Participants":         func(ctx context.Context) error { _, err := m.Participants(ctx); return err },
		"RWLock.Participants":        func(ctx context.Context) error { _, err := rw.Participants(ctx); return err },
		"RWHalf.Participants":        func(ctx context.Context) error { _, err := rw.ReadLock().Participants(ctx); return err },
		"RWHalf.Lock":                func(ctx context.Context) error { _, err := rw.ReadLock().Lock(ctx); return err },
		"RWHalf.TryLock":             func(ctx context.Context) error { _, err := rw.WriteLock().TryLock(ctx); return err },
		"Semaphore.Acquire":          func(ctx context.Context) error { _, err := sem.Acquire(ctx); return err },
		"Semaphore.TryAcquire":       func(ctx context.Context) error { _, err := sem.TryAcquire(ctx); return err },
		"Semaphore.AcquireN":         func(ctx context.Context) error { _, err := sem.AcquireN(ctx, 2); return err },
		"Semaphore.Participants":     func(ctx context.Context) error { _, err := sem.Participants(ctx); return err },
		"SemaphoreMutex.Lock":        func(ctx context.Context) error { _, err := sm.Lock(ctx); return err },
		"SemaphoreMutex.TryLock":     func(ctx context.Context) error { _, err := sm.TryLock(ctx); return err },
		"LeaderElection.Campaign":    func(ctx context.Context) error { _, err := e.Campaign(ctx); return err },
		"LeaderElection.TryCampaign": func(ctx context.Context) error { _, err := e.TryCampaign(ctx); return err },
		"LeaderElection.Leader":      func(ctx context.Context) error { _, err := e.Leader(ctx); return err },
		"LeaderElection.Run": func(ctx context.Context) error {
			return e.Run(ctx, func(context.Context, *zklock.Leadership) error { return nil })
		},
		"MultiLock.Lock":        func(ctx context.Context) error { _, err := ml.Lock(ctx); return err },
		"Participants":          func(ctx context.Context) error { _, err := zklock.Participants(ctx, s, "/locks/closed"); return err },
		"Revoke":                func(ctx context.Context) error { return zklock.Revoke(ctx, s, "/locks/closed/x-lock-0000000001") },
		"Session.WaitConnected": s.WaitConnected,
	}
	for name, op := range ops {
		require.ErrorIs(t, op(nil), zklock.ErrInvalidArgument, "%s(nil)", name) //nolint:staticcheck // the bad input under test
	}
	require.NoError(t, s.Close())
	for name, op := range ops {
		start := time.Now()
		err := op(ctxTimeout(t, 10*time.Second))
		require.ErrorIs(t, err, zklock.ErrClosed, name)
		require.NotErrorIs(t, err, zklock.ErrUnreachable, name)
		require.Less(t, time.Since(start), time.Second, name)
	}
}
