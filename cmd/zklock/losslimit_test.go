//go:build unix

package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opCreateSession is how zktest's proxy counts a connection handshake.
const opCreateSession = -10

// Each holding verb's loss limit: elect loses leadership at the first
// suspension unless --loss-limit (or ZKLOCK_LOSS_LIMIT) says otherwise; the
// other verbs keep the library's default (2/3 of the session timeout), so a
// short connection cut does not end their hold unless --loss-limit 0 asks
// for it. The proxy cuts the holder's connection; go-zookeeper reconnects
// (to the same session) about a second later.
func TestIntegration_LossLimitPerVerb(t *testing.T) {
	t.Parallel()
	c, conn, _ := zkSetup(t)
	cases := []struct {
		name string
		env  []string
		args []string
		lost bool
	}{
		{"elect default: lost at the first suspension", nil, []string{"elect", "ll-e1"}, true},
		{"elect --loss-limit 5s", nil, []string{"elect", "ll-e2", "--loss-limit", "5s"}, false},
		{"elect ZKLOCK_LOSS_LIMIT=-1s", []string{"ZKLOCK_LOSS_LIMIT=-1s"}, []string{"elect", "ll-e3"}, false},
		{"elect --loss-limit before the verb", nil, []string{"--loss-limit", "5s", "elect", "ll-e4"}, false},
		{"elect --latch default: lost at the first suspension", nil, []string{"elect", "--latch", "ll-e5"}, true},
		{"elect --latch --loss-limit 5s", nil, []string{"elect", "--latch", "ll-e6", "--loss-limit", "5s"}, false},
		{"lock default: 2/3 of the session timeout", nil, []string{"lock", "ll-l1"}, false},
		{"lock --loss-limit 0", nil, []string{"lock", "--loss-limit", "0", "ll-l2"}, true},
		{"lock ZKLOCK_LOSS_LIMIT=0", []string{"ZKLOCK_LOSS_LIMIT=0"}, []string{"lock", "ll-l3"}, true},
		{"read --loss-limit 0", nil, []string{"read", "ll-r", "--loss-limit", "0"}, true},
		{"write --loss-limit 0", nil, []string{"write", "ll-w", "--loss-limit", "0"}, true},
		{"semaphore --loss-limit 0", nil, []string{"semaphore", "ll-s", "--leases", "2", "--loss-limit", "0"}, true},
		{"semaphore default", nil, []string{"semaphore", "ll-s2", "--leases", "2"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proxy := c.Proxy(t)
			// 9s: the default limit (6s) outlasts go-zookeeper's reconnect
			// pause (1s) plus a ping interval (3s) with room to spare.
			env := append([]string{"ZKLOCK_SERVERS=" + proxy.ConnectString(), "ZKLOCK_SESSION_TIMEOUT=9s"}, tc.env...)
			p := startZklock(t, env, tc.args...)
			node, _, ok := strings.Cut(p.firstLine(t), " ")
			require.True(t, ok, p.stderr.String())
			require.Equal(t, 1, proxy.Requests()[opCreateSession])

			proxy.Cut()
			if tc.lost {
				assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
				assert.Contains(t, p.stderr.String(), "lost")
				require.Eventually(t, func() bool {
					ok, _, err := conn.Exists(node)
					return err == nil && !ok
				}, 20*time.Second, 10*time.Millisecond, "the lost hold's node was not deleted")
				return
			}
			require.Eventually(t, func() bool { return proxy.Requests()[opCreateSession] >= 2 || p.exited() },
				20*time.Second, 5*time.Millisecond, "no reconnect")
			require.False(t, p.exited(), "the hold ended at the cut: %s", p.stderr.String())
			_, stat, err := conn.Exists(node)
			require.NoError(t, err)
			require.NotNil(t, stat)
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			assert.Equal(t, exitOK, p.wait(t, 20*time.Second), "the hold was lost: %s", p.stderr.String())
			require.Eventually(t, func() bool {
				ok, _, err := conn.Exists(node)
				return err == nil && !ok
			}, 20*time.Second, 10*time.Millisecond, "node left behind")
		})
	}
}

// `zklock revoke` given a lock path (the directory of its contenders), or
// any node not named as a lock node, refuses with exit 2 and writes nothing.
func TestIntegration_RevokeRefusesLockPath(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	p, node, _ := holder(t, env, "rvdir")
	_, err := conn.Set("/locks/rvdir", []byte("keep"), -1)
	require.NoError(t, err)

	for _, arg := range []string{"rvdir", "/locks/rvdir", "/locks"} {
		code, _, stderr := runZklock(t, env, "revoke", arg)
		assert.Equal(t, exitUsage, code, "revoke %s: %s", arg, stderr)
		assert.Contains(t, stderr, "not a lock node", arg)
	}
	// Named like a lock node but with children: refused after reading it.
	_, err = conn.Create("/odd", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create("/odd/x-lock-0000000001", []byte("keep"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = conn.Create("/odd/x-lock-0000000001/child", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	code, _, stderr := runZklock(t, env, "revoke", "/odd/x-lock-0000000001")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "has 1 children")

	for path, want := range map[string]string{"/locks/rvdir": "keep", "/odd/x-lock-0000000001": "keep"} {
		data, _, err := conn.Get(path)
		require.NoError(t, err)
		assert.Equal(t, want, string(data), "%s was written", path)
	}
	data, _, err := conn.Get(node)
	require.NoError(t, err)
	assert.NotEqual(t, "__REVOKE__", string(data))

	// The holder's own node is still accepted.
	code, _, stderr = runZklock(t, env, "revoke", node)
	assert.Equal(t, exitOK, code, stderr)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
}
