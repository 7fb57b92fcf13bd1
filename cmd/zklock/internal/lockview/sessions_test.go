package lockview

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// A login session expires after its TTL; at most max are kept, the one
// that expires first giving way; clear ends them all.
func TestSessionsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSessions(time.Hour, 3)
		a, exp := s.add()
		require.Equal(t, time.Now().Add(time.Hour), exp)
		require.True(t, s.valid(a))
		require.False(t, s.valid(a+"0"))
		time.Sleep(59 * time.Minute)
		require.True(t, s.valid(a))
		b, _ := s.add()
		time.Sleep(time.Minute)
		require.False(t, s.valid(a), "expired")
		require.True(t, s.valid(b))
		c, _ := s.add()
		d, _ := s.add()
		e, _ := s.add()
		require.Equal(t, 3, s.len())
		require.False(t, s.valid(b), "the oldest gave way")
		for _, id := range []string{c, d, e} {
			require.True(t, s.valid(id))
		}
		s.remove(c)
		require.False(t, s.valid(c))
		s.clear()
		require.False(t, s.valid(d))
		require.Zero(t, s.len())
	})
}

// The throttle lets burst wrong tries through, then one per every; an
// address's wait is its own; past max addresses the memory stays bounded.
func TestThrottle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		th := newThrottle(3, time.Second, 2)
		for i := range 3 {
			require.Zero(t, th.wait("a"), i)
			require.Equal(t, i == 2, th.fail("a"), i)
		}
		require.Equal(t, time.Second, th.wait("a"))
		require.Zero(t, th.wait("b"))
		time.Sleep(500 * time.Millisecond)
		require.Equal(t, 500*time.Millisecond, th.wait("a"))
		time.Sleep(500 * time.Millisecond)
		require.Zero(t, th.wait("a"))
		th.fail("a")
		require.Equal(t, time.Second, th.wait("a"))

		for i := range 100 {
			th.fail(fmt.Sprint("addr-", i))
		}
		require.LessOrEqual(t, len(th.buckets), 2)
		require.Equal(t, time.Second, th.wait("a"), "kept")
	})
}

func TestClientAddr(t *testing.T) {
	for remote, want := range map[string]string{
		"127.0.0.1:5000":             "127.0.0.1",
		"[::ffff:10.0.0.1]:1":        "10.0.0.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"192.0.2.7":                  "192.0.2.7",
		"not-an-address":             "not-an-address",
		"[fe80::1%eth0]:80":          "fe80::/64",
	} {
		require.Equal(t, want, ClientAddr(remote), remote)
	}
}
