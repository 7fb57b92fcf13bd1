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
		{[]string{"--acl", "digest::rwcda", "lock", "p", "true"}, `ACL entry "digest::rwcda": a digest id is USER:HASH`},
		{[]string{"--acl", "world:read", "lock", "p", "true"}, "the ACL grants no one CREATE (c)"},
		{[]string{"--acl", `creator,"x509:CN=ops,O=Example:rwcda`, "lock", "p", "true"}, "no closing quote"},
	} {
		code, _, stderr := runZklock(t, env, tt.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tt.args, stderr)
		assert.Contains(t, stderr, tt.want, tt.args)
	}
}

// parseACLFlag: each entry's error says what is wrong with it; a quoted
// entry may hold commas (an x509 distinguished name); an ACL that grants
// no one READ, CREATE or DELETE is refused before anything is created.
func TestParseACLFlag(t *testing.T) {
	const hash = "alice:+Ir5sN1lGJEEs8xBZhZXKvjLJ7c=" // base64 of a SHA-1
	for _, tt := range []struct {
		text string
		want []zk.ACL
		err  string
	}{
		{"creator", zk.AuthACL(zk.PermAll), ""},
		{"world", zk.WorldACL(zk.PermAll), ""},
		{"creator,world:read", append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...), ""},
		{` "x509:CN=ops,O=Example,C=DE:rwcda" `, []zk.ACL{{Scheme: "x509", ID: "CN=ops,O=Example,C=DE", Perms: zk.PermAll}}, ""},
		{`creator,"x509:CN=a \"b\",O=c\\d:r"`, append(zk.AuthACL(zk.PermAll), zk.ACL{Scheme: "x509", ID: `CN=a "b",O=c\d`, Perms: zk.PermRead}), ""},
		{"digest:" + hash + ":rwcda", []zk.ACL{{Scheme: "digest", ID: hash, Perms: zk.PermAll}}, ""},
		{"ip:10.0.0.0/8:rcd,ip:::1:rcd", []zk.ACL{{Scheme: "ip", ID: "10.0.0.0/8", Perms: zk.PermRead | zk.PermCreate | zk.PermDelete},
			{Scheme: "ip", ID: "::1", Perms: zk.PermRead | zk.PermCreate | zk.PermDelete}}, ""},
		{"sasl:zk@EXAMPLE.COM:cdr", []zk.ACL{{Scheme: "sasl", ID: "zk@EXAMPLE.COM", Perms: zk.PermRead | zk.PermCreate | zk.PermDelete}}, ""},

		{"wrold", nil, `ACL entry "wrold": no ':'`},
		{"world:anyone", nil, `ACL entry "world:anyone": one ':'`},
		{":x:r", nil, `ACL entry ":x:r": no scheme`},
		{"world:anyone:", nil, `ACL entry "world:anyone:": no perms after the last ':'`},
		{"world:anyone:rx", nil, `perms "rx": want letters of rwcda`},
		{"world:anyone:rr", nil, `perms "rr"`},
		{"world:everyone:rwcda", nil, `the world scheme has one id, anyone (not "everyone")`},
		{"digest::rwcda", nil, `a digest id is USER:HASH`},
		{"digest:alice:pw:rwcda", nil, `a digest id is USER:HASH, HASH the base64 SHA-1`},
		{"digest:alice:rwcda", nil, `a digest id is USER:HASH`},
		{"ip:10.0.0.300:rwcda", nil, `an ip id is an address or a CIDR range`},
		{"ip:10.0.0.0/33:r", nil, `an ip id is an address or a CIDR range`},
		{"x509::rwcda", nil, `no id between the scheme and the perms`},
		{"creator,", nil, "an empty ACL entry"},
		{"x509:CN=ops,O=Example:rwcda", nil, `ACL entry "x509:CN=ops": one ':'`},
		{`"x509:CN=ops`, nil, "no closing quote"},
		{`"world"x`, nil, "text after its closing quote"},
		{`world"x"`, nil, "a quote opens an entry only at its start"},
		{`"a\x"`, nil, `in quotes, \ is followed by " or \ only`},
		{"world:read", nil, "the ACL grants no one CREATE (c): no one could create a lock node in a directory zklock creates, nor DELETE (d)"},
		{"world:anyone:rd", nil, "grants no one CREATE (c)"},
		{"world:anyone:cd", nil, "grants no one READ (r)"},
		{"world:anyone:rc", nil, "grants no one DELETE (d)"},
	} {
		got, err := parseACLFlag(tt.text)
		if tt.err != "" {
			require.ErrorContains(t, err, tt.err, tt.text)
			require.NotContains(t, err.Error(), "needs credentials", tt.text)
			continue
		}
		require.NoError(t, err, tt.text)
		require.Equal(t, tt.want, got, tt.text)
	}
}
