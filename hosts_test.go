package zklock

import (
	"math/rand/v2"
	"testing"
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

// For paceFor after a pass over every server failed, Next reports no pass
// and pauses before each new one; then it reports every pass. A connection
// starts the pacing over, and closing the session ends a pause.
func TestHostListPaces(t *testing.T) {
	h := &hostList{pace: Backoff{Base: 10 * time.Millisecond, Max: 20 * time.Millisecond}, paceFor: 200 * time.Millisecond}
	require.NoError(t, h.Init([]string{"a:1", "b:1", "c:1"}))
	h.Next() // the first try
	h.Connected()
	for round := range 2 {
		var first time.Time
		reported := false
		for i := 0; i < 1000 && !reported; i++ {
			start := time.Now()
			s, wrapped := h.Next()
			if s != "a:1" {
				require.False(t, wrapped, "round %d: only a pass over every server is reported", round)
				continue
			}
			if first.IsZero() {
				first = start
			}
			if wrapped {
				require.GreaterOrEqual(t, time.Since(first), h.paceFor, "round %d: reported while pacing", round)
				reported = true
				continue
			}
			require.GreaterOrEqual(t, time.Since(start), 5*time.Millisecond, "round %d: no pause before a new pass", round)
		}
		require.True(t, reported, "round %d: never reported a pass", round)
		_, wrapped := h.Next()
		require.False(t, wrapped)
		h.Next()
		_, wrapped = h.Next()
		require.True(t, wrapped, "round %d: past the pacing every pass is reported", round)
		h.Connected()
	}

	quit := make(chan struct{})
	slow := &hostList{pace: Backoff{Base: time.Hour, Max: time.Hour}, paceFor: time.Hour, quit: quit}
	require.NoError(t, slow.Init([]string{"a:1"}))
	slow.Next()
	done := make(chan struct{})
	go func() {
		slow.Next() // a pause of at least half an hour
		close(done)
	}()
	close(quit)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the session did not end the pause")
	}
}
