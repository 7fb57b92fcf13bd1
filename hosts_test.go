package zklock

import (
	"context"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckServer(t *testing.T) {
	for _, ok := range []string{"zk1:2181", "127.0.0.1:1", "[::1]:65535", "zk1", "zk1.example.com:2281"} {
		assert.NoError(t, checkServer(ok), ok)
	}
	for s, want := range map[string]string{
		"":                "empty server address",
		"127.0.0.1:99999": `port "99999" is not a number from 1 to 65535`,
		"zk1:0":           `port "0"`,
		"zk1:http":        `port "http"`,
		":2181":           "no host",
		"::1":             "want host:port",
	} {
		err := checkServer(s)
		require.ErrorIs(t, err, ErrInvalidArgument, s)
		assert.Contains(t, err.Error(), want, s)
	}
	_, err := Connect([]string{"zk1:2181", "127.0.0.1:99999"})
	require.ErrorIs(t, err, ErrInvalidArgument, "Connect refuses it before dialling anything")
}

// hostList keeps the servers as given, and its round robin is
// go-zookeeper's: retryStart comes at the same calls as from
// zk.DNSHostProvider's, which resolves the names (IP addresses here, so no
// lookup) and shuffles them.
func TestHostListRoundRobin(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 4; n++ {
		servers := make([]string, n)
		for i := range servers {
			servers[i] = "127.0.0." + string(rune('1'+i)) + ":2181"
		}
		ours, theirs := &hostList{}, zk.NewDNSHostProvider()
		require.NoError(t, ours.Init(servers))
		require.NoError(t, theirs.Init(servers))
		require.Equal(t, n, ours.Len())
		seen := map[string]bool{}
		for step := range 200 {
			if r.IntN(4) == 0 {
				ours.Connected()
				theirs.Connected()
				continue
			}
			s, a := ours.Next()
			_, b := theirs.Next()
			require.Equal(t, b, a, "n=%d step %d: retryStart", n, step)
			seen[s] = true
		}
		assert.Len(t, seen, n, "every server is tried")
	}
	names := []string{"zk1.example:2281", "zk2.example:2281"}
	h := &hostList{}
	require.NoError(t, h.Init(names))
	a, _ := h.Next()
	b, _ := h.Next()
	assert.Equal(t, names, []string{a, b}, "names are kept, in the order given")
}

// The session's pacing, in virtual time: for paceFor after a pass over
// every server failed, Next reports no pass and pauses before each new one
// for between half and all of the backoff's ceiling (12-25 ms doubling up
// to 50-100 ms); the first pass that starts paceFor or more after the
// failed one is reported, at once, and so is every later one, as
// go-zookeeper's own provider does. A connection starts the pacing over,
// and closing the session ends a pause at that instant.
func TestHostListPaces(t *testing.T) {
	const (
		window = time.Second // paceFor, written out so that a change shows
		ms     = time.Millisecond
	)
	ceilings := []time.Duration{25 * ms, 50 * ms, 100 * ms} // then 100 ms
	synctest.Test(t, func(t *testing.T) {
		quit := make(chan struct{})
		h := newHostList(quit)
		require.NoError(t, h.Init([]string{"a:1", "b:1", "c:1"}))
		h.Next() // the first try
		h.Connected()
		for round := range 2 {
			var failed time.Time // when the first pass failed
			pass := 0
			for reported := false; !reported; {
				start := time.Now()
				s, wrapped := h.Next()
				took := time.Since(start)
				if s != "a:1" { // within a pass
					require.False(t, wrapped, "round %d: only a pass over every server is reported", round)
					require.Zero(t, took, "round %d: a pause within a pass", round)
					continue
				}
				if failed.IsZero() {
					failed = start
				}
				if start.Sub(failed) >= window {
					require.True(t, wrapped, "round %d: a pass %v after the first failed one is not reported", round, start.Sub(failed))
					require.Zero(t, took, "round %d: a pause before a reported pass", round)
					reported = true
					continue
				}
				require.False(t, wrapped, "round %d: pass %d reported while pacing", round, pass)
				ceil := ceilings[min(pass, len(ceilings)-1)]
				require.GreaterOrEqual(t, took, ceil/2, "round %d: pass %d", round, pass)
				require.LessOrEqual(t, took, ceil, "round %d: pass %d", round, pass)
				pass++
			}
			require.GreaterOrEqual(t, pass, 10, "round %d: paced passes", round)
			for range 3 { // past the pacing: every pass reported, no pause
				start := time.Now()
				_, w1 := h.Next()
				_, w2 := h.Next()
				_, w3 := h.Next()
				require.Equal(t, []bool{false, false, true}, []bool{w1, w2, w3}, "round %d", round)
				require.Zero(t, time.Since(start), "round %d", round)
			}
			h.Connected()
		}

		h.Next() // b:1, connected
		h.Connected()
		h.Next()
		h.Next()
		done := make(chan time.Duration)
		start := time.Now()
		go func() {
			h.Next() // b:1 again: the first paced pass
			done <- time.Since(start)
		}()
		time.Sleep(5 * ms)
		close(quit)
		require.Equal(t, 5*ms, <-done, "closing the session ends the pause")
	})
}

// Backoff.sleep waits the jittered delay in virtual time, at most the
// attempt's ceiling, and ends when its context does.
func TestBackoffSleeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := DefaultBackoff
		for attempt, ceil := range []time.Duration{50, 100, 200, 400, 800, 1600, 2000, 2000} {
			start := time.Now()
			require.NoError(t, b.sleep(context.Background(), attempt))
			require.LessOrEqual(t, time.Since(start), ceil*time.Millisecond, "attempt %d", attempt)
		}
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		time.AfterFunc(10*time.Millisecond, cancel)
		if err := b.sleep(ctx, 10); err != nil {
			require.ErrorIs(t, err, context.Canceled)
			require.Equal(t, 10*time.Millisecond, time.Since(start))
		} else {
			require.Less(t, time.Since(start), 10*time.Millisecond)
		}
	})
}
