package zklock_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestIntegration_Era: sessions that ask at once agree on one era, created
// once, read-only; a hold's era is its session's; once the hold's
// ZooKeeper session has expired, its era is the one read before, or
// refused with ErrEra, since an era read then could be another ensemble's; a node with data that is not
// an id is refused with ErrEra too, bounded, never echoed whole.
func TestIntegration_Era(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	sessions := []*zklock.Session{connect(t, c), connect(t, c), connect(t, c)}
	eras := make([]string, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			era, err := s.Era(ctx)
			require.NoError(t, err)
			eras[i] = era
		})
	}
	wg.Wait()
	require.Regexp(t, "^[0-9a-f]{32}$", eras[0])
	require.Equal(t, []string{eras[0], eras[0], eras[0]}, eras)
	conn := sessions[0].Conn()
	data, stat, err := conn.Get(zklock.EnsemblePath)
	require.NoError(t, err)
	require.Equal(t, eras[0], string(data))
	require.Zero(t, stat.EphemeralOwner, "persistent")
	_, err = conn.Set(zklock.EnsemblePath, []byte("other"), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth, "read-only: nobody rewrites the era by mistake")

	read, err := newMutex(t, sessions[1], "/era/read").Lock(ctx)
	require.NoError(t, err)
	era, err := read.Era(ctx)
	require.NoError(t, err)
	require.Equal(t, eras[0], era)
	s := connect(t, c)
	unread, err := newMutex(t, s, "/era/unread").Lock(ctx)
	require.NoError(t, err)
	for _, h := range []*zklock.Hold{read, unread} {
		require.NoError(t, c.Expire(h.SessionID()))
		<-h.Done()
	}
	era, err = read.Era(ctx)
	require.NoError(t, err, "read while its session lived")
	require.Equal(t, eras[0], era)
	require.Eventually(t, func() bool { return s.State() == zklock.StateConnected }, 20*time.Second, 5*time.Millisecond)
	_, err = unread.Era(ctx)
	require.ErrorIs(t, err, zklock.ErrEra, "the hold's session is gone")
	era, err = s.Era(ctx)
	require.NoError(t, err, "the session's new ZooKeeper session reads it")
	require.Equal(t, eras[0], era)

	for _, bad := range [][]byte{nil, []byte("has space"), []byte(strings.Repeat("x", 10000))} {
		require.NoError(t, conn.Delete(zklock.EnsemblePath, -1))
		_, err = conn.Create(zklock.EnsemblePath, bad, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		_, err = connect(t, c).Era(ctx)
		require.ErrorIs(t, err, zklock.ErrEra, "%.20q", bad)
		require.Less(t, len(err.Error()), 200)
	}
}

// An ensemble whose root a session may not create nodes in has no era for
// it until someone who may creates one: Era returns "" (fences then check
// tokens alone), and the era once it exists.
func TestIntegration_EraLockedDownRoot(t *testing.T) {
	c := zktest.Start(t)
	ctx := ctxTimeout(t, 30*time.Second)
	admin := connect(t, c, zklock.WithAuth("digest", []byte("admin:pw")))
	_, err := admin.Conn().SetACL("/", append(zk.WorldACL(zk.PermRead|zk.PermWrite), zk.DigestACL(zk.PermAll, "admin", "pw")...), -1)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = admin.Conn().SetACL("/", zk.WorldACL(zk.PermAll), -1) })

	user := connect(t, c)
	era, err := user.Era(ctx)
	require.NoError(t, err)
	require.Empty(t, era, "no era, and none may be made")

	made, err := admin.Era(ctx)
	require.NoError(t, err)
	require.Regexp(t, "^[0-9a-f]{32}$", made)
	era, err = user.Era(ctx)
	require.NoError(t, err)
	require.Equal(t, made, era, "the user reads the era once it exists")
}

// TestIntegration_EraNilContext: a nil context is refused with
// ErrInvalidArgument, as by the other entry points, not a panic; before
// and after the era was read once.
func TestIntegration_EraNilContext(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	h, err := newMutex(t, s, "/era/nil").Lock(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Release() })
	for range 2 {
		//nolint:staticcheck // a nil context is the bad input under test
		_, err := s.Era(nil)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "Session.Era(nil)")
		//nolint:staticcheck // a nil context is the bad input under test
		_, err = h.Era(nil)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "Hold.Era(nil)")
		_, err = s.Era(t.Context())
		require.NoError(t, err)
	}
}
