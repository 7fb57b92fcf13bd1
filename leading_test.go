package zklock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// waitLeading waits, on Leading's channel, until leading reports want.
func waitLeading(t *testing.T, leading func() (bool, <-chan struct{}), want bool) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		is, changed := leading()
		if is == want {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("leading is %v, want %v", is, want)
		}
	}
}

// IsLeader and Leading follow a LeaderElection's terms, whether run by Run
// or held from Campaign: true while the term lasts, false once it is over,
// each change announced on Leading's channel.
func TestIntegration_LeaderElectionIsLeader(t *testing.T) {
	c := zktest.Start(t)
	s1, s2 := connect(t, c), connect(t, c)
	e1, err := zklock.NewLeaderElection(s1, "/elections/isleader", "one")
	require.NoError(t, err)
	e2, err := zklock.NewLeaderElection(s2, "/elections/isleader", "two")
	require.NoError(t, err)
	require.False(t, e1.IsLeader())

	ran := make(chan error, 1)
	go func() {
		ran <- e1.Run(ctxTimeout(t, time.Minute), func(ctx context.Context, l *zklock.Leadership) error {
			<-ctx.Done()
			return nil
		})
	}()
	waitLeading(t, e1.Leading, true)
	require.True(t, e1.IsLeader())
	require.False(t, e2.IsLeader(), "a participant that does not campaign")

	campaigned := make(chan *zklock.Hold, 1)
	go func() {
		h, err := e2.Campaign(ctxTimeout(t, time.Minute))
		if err != nil {
			t.Error(err)
		}
		campaigned <- h
	}()
	require.Never(t, e2.IsLeader, 200*time.Millisecond, 10*time.Millisecond, "a waiting participant leads")

	require.NoError(t, e1.Resign())
	waitLeading(t, e1.Leading, false)
	require.NoError(t, <-ran)
	waitLeading(t, e2.Leading, true)
	h := <-campaigned
	require.NotNil(t, h)
	require.NoError(t, h.Release())
	waitLeading(t, e2.Leading, false)
	require.False(t, e1.IsLeader())
}

// A LeaderLatch's IsLeader and Leading: leading once its node is first, not
// after its session expired (a lost term), leading again after it joined
// again, not after Close.
func TestIntegration_LeaderLatchIsLeader(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := connect(t, c)
	l, err := zklock.NewLeaderLatch(s, "/latch/isleader", "one")
	require.NoError(t, err)
	require.False(t, l.IsLeader())
	require.NoError(t, l.Start(ctxTimeout(t, time.Minute)))
	waitLeading(t, l.Leading, true)
	term, err := l.Await(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)

	require.NoError(t, c.Expire(s.ID()))
	<-term.Done()
	require.False(t, l.IsLeader(), "a lost term")
	waitLeading(t, l.Leading, true) // joined again on the new session
	require.NoError(t, l.Close())
	waitLeading(t, l.Leading, false)
}

// A Session's Done closes at Close and not before (an expiry does not end
// the session), and Watch follows its state after Connect: connected,
// expired and connected again, closed, then the channel closes.
func TestIntegration_SessionDoneAndWatch(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	states := s.Watch(ctxTimeout(t, time.Minute))
	require.Equal(t, zklock.StateConnected, <-states)

	require.NoError(t, c.Expire(s.ID()))
	var seen []zklock.State
	for st := range states {
		seen = append(seen, st)
		if st == zklock.StateConnected {
			break
		}
	}
	require.Contains(t, seen, zklock.StateExpired, "states after the expiry: %v", seen)
	select {
	case <-s.Done():
		t.Fatal("Done closed by an expiry")
	default:
	}

	require.NoError(t, s.Close())
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed by Close")
	}
	var last zklock.State
	for st := range states { // closes after StateClosed
		last = st
	}
	require.Equal(t, zklock.StateClosed, last)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for range s.Watch(cancelled) { // a closed session: its state, then the end
	}
	for range s.Watch(nil) { //nolint:staticcheck // a nil context gives a closed channel
		t.Fatal("a value from Watch(nil)")
	}
}

// Events carry what metrics and spans need: the recipe, the acquire's
// context (its values: a caller's span), and why a leader released: its
// Resign, or a revocation asked of its term.
func TestIntegration_EventRecipeContextCause(t *testing.T) {
	c := zktest.Start(t)
	var (
		mu     sync.Mutex
		events []zklock.Event
	)
	s := connect(t, c, zklock.WithObserver(func(ev zklock.Event) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}))
	find := func(kind zklock.EventKind, path string) zklock.Event {
		var found zklock.Event
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, ev := range events {
				if ev.Kind == kind && ev.Path == path {
					found = ev
					return true
				}
			}
			return false
		}, 10*time.Second, 5*time.Millisecond, "no %v event of %s", kind, path)
		return found
	}
	type key struct{}
	ctx := context.WithValue(ctxTimeout(t, time.Minute), key{}, "caller")

	m := newMutex(t, s, "/locks/events")
	h, err := m.Lock(ctx)
	require.NoError(t, err)
	require.NoError(t, h.Release())
	for _, kind := range []zklock.EventKind{zklock.EventAcquired, zklock.EventReleased} {
		ev := find(kind, "/locks/events")
		require.Equal(t, zklock.RecipeMutex, ev.Recipe, kind)
		require.NotNil(t, ev.Context, kind)
		require.Equal(t, "caller", ev.Context.Value(key{}), kind)
		require.NoError(t, ev.Cause, kind)
	}

	e, err := zklock.NewLeaderElection(s, "/elections/events", "one")
	require.NoError(t, err)
	require.NoError(t, e.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		l.Resign()
		<-ctx.Done()
		return nil
	}))
	ev := find(zklock.EventReleased, "/elections/events")
	require.Equal(t, zklock.RecipeElection, ev.Recipe)
	require.ErrorIs(t, ev.Cause, zklock.ErrResigned)
	require.Equal(t, "caller", ev.Context.Value(key{}))

	re, err := zklock.NewLeaderElection(s, "/elections/revoked", "", zklock.WithRevocable())
	require.NoError(t, err)
	require.NoError(t, re.Run(ctx, func(ctx context.Context, l *zklock.Leadership) error {
		require.NoError(t, zklock.Revoke(ctx, s, l.Hold().Node()))
		<-ctx.Done()
		if !errors.Is(context.Cause(ctx), zklock.ErrRevoked) {
			t.Errorf("term ended by %v", context.Cause(ctx))
		}
		return nil
	}))
	ev = find(zklock.EventReleased, "/elections/revoked")
	require.Equal(t, zklock.RecipeElection, ev.Recipe)
	require.ErrorIs(t, ev.Cause, zklock.ErrRevoked)

	latch, err := zklock.NewLeaderLatch(s, "/latch/events", "one")
	require.NoError(t, err)
	require.NoError(t, latch.Start(ctx))
	_, err = latch.Await(ctx)
	require.NoError(t, err)
	require.Equal(t, zklock.RecipeLatch, find(zklock.EventAcquired, "/latch/events").Recipe)
	require.NoError(t, latch.Close())
}
