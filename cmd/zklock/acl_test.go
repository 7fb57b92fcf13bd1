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

	"github.com/zklock/zklock/internal/peers"
)

// A lock taken with --acl creator cannot be deleted, revoked, read, or
// wedged (a node queued ahead of the next waiter) by a client without the
// credentials, here kazoo; the holder keeps it and releases it as usual.
// Every node zklock made, /locks included, has the creator's ACL. The CLI
// used to create every node world:anyone:cdrwa.
func TestIntegration_ACLCreatorKeepsIntruderOut(t *testing.T) {
	t.Parallel()
	c, _, env := zkSetup(t)
	file := authFile(t, "digest:alice:pw\n", 0o600)
	const dir = "/locks/acl-creator"
	holder := startZklock(t, env, "--auth-file", file, "--acl", "creator", "lock", "--revocable", dir)
	node := strings.Fields(holder.firstLine(t))[0]

	alice := c.Connect(t, zkSessionTimeout)
	require.NoError(t, alice.AddAuth("digest", []byte("alice:pw")))
	for _, p := range []string{"/locks", dir, node} {
		acl, _, err := alice.GetACL(p)
		require.NoError(t, err, p)
		require.Len(t, acl, 1, p)
		assert.Equal(t, "digest", acl[0].Scheme, p)
		assert.True(t, strings.HasPrefix(acl[0].ID, "alice:"), p)
		assert.Equal(t, int32(zk.PermAll), acl[0].Perms, p)
	}

	kz := peers.Kazoo(t, c.ConnectString(), 10*time.Second)
	for _, cmd := range []string{
		"delete " + node,
		"set " + node + " __REVOKE__",
		"get " + node,
		"children " + dir,
		"create " + dir + "/_c_5d1e0c4a-7b1f-4c2e-9a0b-3c6f1e2d4a5b-lock- ephseq digest:mallory:x:rwcda",
		"create /locks/other persistent",
		"delete " + dir,
	} {
		_, err := kz.Do(cmd)
		require.Error(t, err, cmd)
		assert.Contains(t, err.Error(), "NoAuth", cmd)
	}
	code, _, stderr := runZklock(t, env, "revoke", node)
	assert.Equal(t, exitError, code, stderr)
	assert.Contains(t, stderr, "not authenticated")

	cs, _, err := alice.Children(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{node[len(dir)+1:]}, cs, "the intruder changed the queue")
	data, _, err := alice.Get(node)
	require.NoError(t, err)
	assert.Empty(t, data, "revoked")
	assert.False(t, holder.exited(), "the holder lost its lock: %s", holder.stderr)

	require.NoError(t, holder.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, holder.wait(t, 20*time.Second), holder.stderr.String())
}

// --acl: the presets and explicit entries, and what is refused before
// anything connects.
func TestCLIACLFlag(t *testing.T) {
	t.Parallel()
	env := []string{"ZKLOCK_SERVERS=" + deadAddr(t)}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--acl", "creator", "lock", "p", "true"}, "needs --auth, --auth-file or ZKLOCK_AUTH"},
		{[]string{"--acl", "creator,world:read", "elect", "p", "true"}, "needs --auth"},
		{[]string{"--acl", "wrold", "lock", "p", "true"}, `ACL entry "wrold"`},
		{[]string{"--acl", "world:anyone:rx", "lock", "p", "true"}, "letters of rwcda"},
		{[]string{"--acl", "world", "status", "p"}, "--acl is not a flag of status"},
		{[]string{"--acl", "world", "elect", "--listen", "p"}, "takes no --id, --requeue, --revocable, --acl"},
	} {
		code, _, stderr := runZklock(t, env, tt.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tt.args, stderr)
		assert.Contains(t, stderr, tt.want, tt.args)
	}
}
