package zklock

import (
	"math/rand/v2"
	"testing"

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
