package zklock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// eventLog records a session's lock events (not its state changes).
type eventLog struct {
	mu sync.Mutex
	ev []zklock.Event
}

func (l *eventLog) observe(ev zklock.Event) {
	if ev.Kind == zklock.EventState {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ev = append(l.ev, ev)
}

func (l *eventLog) take() []zklock.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.ev
	l.ev = nil
	return out
}

func kinds(evs []zklock.Event) []zklock.EventKind {
	var out []zklock.EventKind
	for _, ev := range evs {
		out = append(out, ev.Kind)
	}
	return out
}

// Every acquire reports its start and its end under one number: a hold's
// acquire then its release, a try that finds the lock taken, a wait that
// times out (with the node it had queued), so that spans can be built.
func TestIntegration_AcquireEvents(t *testing.T) {
	c := zktest.Start(t)
	log := &eventLog{}
	s := connect(t, c, zklock.WithObserver(log.observe))
	other := connect(t, c)
	const path = "/locks/events"
	m := newMutex(t, s, path)

	h, err := m.Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	require.NoError(t, h.Release())
	evs := log.take()
	require.Equal(t, []zklock.EventKind{zklock.EventAcquiring, zklock.EventAcquired, zklock.EventReleased}, kinds(evs))
	require.NotZero(t, evs[0].Acquire)
	require.Equal(t, evs[0].Acquire, evs[1].Acquire)
	require.Equal(t, evs[0].Acquire, evs[2].Acquire)
	require.Equal(t, path, evs[0].Path)

	held, err := newMutex(t, other, path).Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	_, err = m.TryLock(ctxTimeout(t, 10*time.Second))
	require.ErrorIs(t, err, zklock.ErrLocked)
	evs = log.take()
	require.Equal(t, []zklock.EventKind{zklock.EventAcquiring, zklock.EventAcquireFailed}, kinds(evs))
	require.Equal(t, evs[0].Acquire, evs[1].Acquire)
	require.ErrorIs(t, evs[1].Err, zklock.ErrLocked)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err = m.Lock(ctx)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	evs = log.take()
	require.Equal(t, []zklock.EventKind{zklock.EventAcquiring, zklock.EventAcquireFailed}, kinds(evs))
	require.Equal(t, evs[0].Acquire, evs[1].Acquire)
	require.ErrorIs(t, evs[1].Err, context.DeadlineExceeded)
	require.Contains(t, evs[1].Node, path+"/")
	require.GreaterOrEqual(t, evs[1].Wait, 300*time.Millisecond)
	require.NoError(t, held.Release())
}

// Participants carry their node's creation time and whom each waiter
// waits for; Queue judges a listing the same way without any I/O.
func TestIntegration_ParticipantCtimeAndWaits(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	const path = "/locks/ctime"
	before := time.Now().Add(-time.Minute) // the server's clock, on this machine
	h, err := newMutex(t, s, path).Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	defer h.Release()
	go func() { _, _ = newMutex(t, connect(t, c), path).Lock(ctxTimeout(t, 10*time.Second)) }()
	var ps []zklock.Participant
	require.Eventually(t, func() bool {
		ps, err = zklock.Participants(ctxTimeout(t, 10*time.Second), s, path)
		return err == nil && len(ps) == 2
	}, 10*time.Second, 10*time.Millisecond)
	for _, p := range ps {
		require.True(t, p.Ctime.After(before) && p.Ctime.Before(time.Now().Add(time.Minute)), "ctime %v", p.Ctime)
		require.NotZero(t, p.Session)
	}
	require.True(t, ps[0].Holds)
	require.Empty(t, ps[0].Waits)
	require.False(t, ps[1].Holds)
	require.Equal(t, ps[0].Node, ps[1].Waits)

	q := zklock.Queue(path, []string{ps[1].Node, "not-a-lock-node", ps[0].Node})
	require.Len(t, q, 2)
	require.Equal(t, ps[0].Node, q[0].Node)
	require.Equal(t, path+"/"+ps[0].Node, q[0].Path)
	require.True(t, q[0].Holds)
	require.Equal(t, ps[0].Node, q[1].Waits)
}

func TestQueue(t *testing.T) {
	const d = "/l"
	tests := []struct {
		name     string
		children []string
		holds    []bool
		waits    []string
	}{
		{"empty", nil, nil, nil},
		{"mutex", []string{"_c_b-lock-0000000002", "_c_a-lock-0000000001", "x"},
			[]bool{true, false}, []string{"", "_c_a-lock-0000000001"}},
		{"readers share until a writer", []string{"r-__READ__0000000001", "r-__READ__0000000002", "w-__WRIT__0000000003", "r-__READ__0000000004"},
			[]bool{true, true, false, false}, []string{"", "", "r-__READ__0000000002", "w-__WRIT__0000000003"}},
		{"leases all hold", []string{"_c_a-lease-0000000001", "_c_b-lease-0000000002"},
			[]bool{true, true}, []string{"", ""}},
		{"kazoo counts", []string{"0123456789abcdef0123456789abcdef__lock__0000000005", "_c_a-lock-0000000006"},
			[]bool{true, false}, []string{"", "0123456789abcdef0123456789abcdef__lock__0000000005"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := zklock.Queue(d, tt.children)
			require.Len(t, q, len(tt.holds))
			for i, p := range q {
				require.Equal(t, tt.holds[i], p.Holds, p.Node)
				require.Equal(t, tt.waits[i], p.Waits, p.Node)
			}
		})
	}
}
