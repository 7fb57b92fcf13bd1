package zklock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func TestOwnerOf(t *testing.T) {
	for _, tc := range []struct{ data, owner, rest string }{
		{"10.0.0.1", "", "10.0.0.1"},
		{"10.0.0.1\nzklock-owner=h/1/2", "h/1/2", "10.0.0.1"},
		{"\nzklock-owner=h/1/2", "h/1/2", ""},
		{"id\nzklock-owner=", "", "id\nzklock-owner="},
		{"id\nzklock-owner=a\x01b", "", "id\nzklock-owner=a\x01b"},
		{"id\nzklock-owner=" + strings.Repeat("x", zklock.MaxOwnerLen+1), "", "id\nzklock-owner=" + strings.Repeat("x", zklock.MaxOwnerLen+1)},
	} {
		owner, rest := zklock.OwnerOf([]byte(tc.data))
		require.Equal(t, tc.owner, owner, "%q", tc.data)
		require.Equal(t, tc.rest, string(rest), "%q", tc.data)
	}
	require.Regexp(t, `^[^/]+/\d+/\d+$`, zklock.ProcessOwner())
}

// TestIntegration_OwnerInNodeData: WithOwner appends its line to the data
// (the first line unchanged), leader elections and revocable locks ignore
// it, and a bad id is refused.
func TestIntegration_OwnerInNodeData(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	ctx := ctxTimeout(t, 20*time.Second)
	m := newMutex(t, s, "/owned", zklock.WithData([]byte("me")), zklock.WithOwner("h/1/2"))
	h, err := m.Lock(ctx)
	require.NoError(t, err)
	data, _, err := s.Conn().Get(h.Node())
	require.NoError(t, err)
	require.Equal(t, "me\nzklock-owner=h/1/2", string(data))
	require.NoError(t, h.Release())

	e, err := zklock.NewLeaderElection(s, "/owned-e", "cand", zklock.WithOwner("h/1/2"))
	require.NoError(t, err)
	require.Equal(t, "cand", e.ID())

	_, err = zklock.NewMutex(s, "/owned", zklock.WithOwner("a\nb"))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
}
