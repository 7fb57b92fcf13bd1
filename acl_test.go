package zklock_test

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

func TestParseACL(t *testing.T) {
	creator := zk.ACL{Perms: zk.PermAll, Scheme: "auth", ID: ""}
	worldRead := zk.ACL{Perms: zk.PermRead, Scheme: "world", ID: "anyone"}
	for _, tc := range []struct {
		text string
		want []zk.ACL
	}{
		{"creator", []zk.ACL{creator}},
		{"creator,world:read", []zk.ACL{creator, worldRead}},
		{"creator, world:read", zklock.CreatorWorldReadACL()},
		{"world", zklock.WorldACL()},
		{"digest:alice:X/Y+Z=:rwcda", []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: "alice:X/Y+Z="}}},
		{"ip:10.0.0.0/8:r,world:anyone:rw", []zk.ACL{{Perms: zk.PermRead, Scheme: "ip", ID: "10.0.0.0/8"},
			{Perms: zk.PermRead | zk.PermWrite, Scheme: "world", ID: "anyone"}}},
	} {
		got, err := zklock.ParseACL(tc.text)
		require.NoError(t, err, tc.text)
		require.Equal(t, tc.want, got, tc.text)
	}
	require.Equal(t, []zk.ACL{creator}, zklock.CreatorACL())
	for _, bad := range []string{"", "wrold", "world:", ":x:r", "digest:alice:pw", "world:anyone:", "world:anyone:rr", "world:anyone:x", "creator,"} {
		_, err := zklock.ParseACL(bad)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "%q", bad)
	}
}

// A creator ACL without credentials is refused at once, nothing sent:
// ZooKeeper would refuse every create with InvalidACL.
func TestCreatorACLNeedsCredentials(t *testing.T) {
	s, err := zklock.Connect([]string{"127.0.0.1:1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = zklock.NewMutex(s, "/locks/x", zklock.WithACL(zklock.CreatorACL()))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.ErrorContains(t, err, "WithAuth")
}
