package zktest_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
	"github.com/zklock/zklock/zktest"
)

func TestIntegration_KillLeader(t *testing.T) {
	c := track(zktest.StartEnsemble(t))
	c.RequireFaults(t)
	old, err := c.Leader()
	require.NoError(t, err)
	survivor := (old + 1) % c.Size()

	states := newStates()
	conn := c.ConnectTo(t, c.Servers()[survivor:survivor+1], 10*time.Second, states.option())
	sid := conn.SessionID()
	mine := testRoot(t, conn) + "/mine"
	_, err = conn.Create(mine, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	require.NoError(t, c.Kill(old))
	require.ErrorIs(t, c.Kill(old), zktest.ErrNotRunning)
	require.Eventually(t, func() bool {
		l, err := c.Leader()
		return err == nil && l != old
	}, 30*time.Second, 50*time.Millisecond, "no new leader")

	// The follower dropped its clients while electing; the client comes
	// back to it with the same session, and its ephemeral node survived.
	states.wait(t, zk.StateDisconnected, 30*time.Second)
	states.wait(t, zk.StateHasSession, 30*time.Second)
	require.Equal(t, sid, conn.SessionID())
	ok, _, err := conn.Exists(mine)
	require.NoError(t, err)
	require.True(t, ok)

	// The old leader comes back with its data and rejoins.
	require.NoError(t, c.Start(old))
	out, err := c.FourLetter(old, "srvr")
	require.NoError(t, err)
	require.Contains(t, out, "Mode: ")
	require.Error(t, c.Start(old), "starting a running member must fail")
	require.NoError(t, c.Restart(old))
	waitServing(t, c)
}

func TestIntegration_PauseFollower(t *testing.T) {
	c := track(zktest.StartEnsemble(t))
	c.RequireFaults(t)
	leader, err := c.Leader()
	require.NoError(t, err)
	paused, other := (leader+1)%3, (leader+2)%3
	conn := c.ConnectTo(t, c.Servers()[other:other+1], 10*time.Second)
	root := testRoot(t, conn)

	require.NoError(t, c.Pause(paused))
	require.NoError(t, c.Pause(paused), "pausing twice is a no-op")
	// The paused member accepts TCP (the kernel does) but never answers.
	raw, err := net.Dial("tcp", c.Servers()[paused])
	require.NoError(t, err)
	defer raw.Close()
	_, err = raw.Write([]byte("ruok"))
	require.NoError(t, err)
	require.NoError(t, raw.SetReadDeadline(time.Now().Add(300*time.Millisecond)))
	_, err = raw.Read(make([]byte, 4))
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "paused server answered: %v", err)

	// The leader drops the silent follower; the quorum keeps serving.
	require.Eventually(t, func() bool {
		out, err := c.FourLetter(leader, "mntr")
		return err == nil && strings.Contains(out, "zk_synced_followers\t1")
	}, 30*time.Second, 50*time.Millisecond)
	for _, p := range []string{"/p1", "/p2", "/p3"} {
		_, err := conn.Create(root+p, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}

	require.NoError(t, c.Resume(paused))
	waitServing(t, c)
	require.Eventually(t, func() bool {
		out, err := c.FourLetter(leader, "mntr")
		return err == nil && strings.Contains(out, "zk_synced_followers\t2")
	}, 30*time.Second, 50*time.Millisecond)
	back := c.ConnectTo(t, c.Servers()[paused:paused+1], 10*time.Second)
	_, err = back.Sync(root + "/p3")
	require.NoError(t, err)
	ok, _, err := back.Exists(root + "/p3")
	require.NoError(t, err)
	require.True(t, ok, "resumed follower missed writes")
}

func TestIntegration_Expire(t *testing.T) {
	c := track(zktest.StartEnsemble(t))
	n := c.Size()
	// The victim is on the last member; Expire goes to the first live one.
	states := newStates()
	victim := c.ConnectTo(t, c.Servers()[n-1:], 10*time.Second, states.option())
	sid := victim.SessionID()
	observer := c.ConnectTo(t, c.Servers()[:1], 10*time.Second)
	eph := testRoot(t, observer) + "/victim"
	_, err := victim.Create(eph, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = victim.Sync(eph)
	require.NoError(t, err)
	ok, _, err := observer.Exists(eph)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, c.Expire(sid))
	_, err = observer.Sync(eph)
	require.NoError(t, err)
	ok, _, err = observer.Exists(eph)
	require.NoError(t, err)
	require.False(t, ok, "ephemeral node survived Expire")

	// The victim learns on its next contact (a ping within 10s/3).
	states.wait(t, zk.StateExpired, 20*time.Second)

	require.ErrorIs(t, c.Expire(sid), zktest.ErrNoSession)
	require.ErrorIs(t, c.Expire(12345), zktest.ErrUnknownSession)
}

func TestIntegration_ExternalBackend(t *testing.T) {
	// local processes, unless the whole run already points at ZK_SERVERS
	local := track(zktest.Start(t))
	t.Setenv(zktest.EnvServers, local.ConnectString())
	ext := zktest.Start(t, zktest.WithServers(3)) // size comes from ZK_SERVERS
	require.Equal(t, "external", ext.Backend())
	require.Equal(t, local.Servers(), ext.Servers())

	for name, f := range map[string]func() error{
		"Kill": func() error { return ext.Kill(0) }, "Stop": func() error { return ext.Stop(0) },
		"Start": func() error { return ext.Start(0) }, "Restart": func() error { return ext.Restart(0) },
		"Pause": func() error { return ext.Pause(0) }, "Resume": func() error { return ext.Resume(0) },
		"Leader": func() error { _, err := ext.Leader(); return err },
	} {
		err := f()
		require.ErrorIs(t, err, zktest.ErrUnsupported, name)
		require.ErrorIs(t, err, errors.ErrUnsupported, name)
	}
	var skipped bool
	t.Run("RequireFaults", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		ext.RequireFaults(t)
	})
	require.True(t, skipped, "RequireFaults did not skip on ZK_SERVERS")

	// Connect, Expire and Proxy work against the existing ensemble, and
	// the local server underneath is untouched by the external Cluster.
	check := local.Connect(t, 10*time.Second)
	eph := testRoot(t, check) + "/ext"
	states := newStates()
	p := ext.Proxy(t)
	conn := p.Connect(t, 10*time.Second, states.option())
	_, err := conn.Create(eph, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.Equal(t, 1, p.Requests()[wire.OpCreate])
	require.NoError(t, ext.Expire(conn.SessionID()))
	states.wait(t, zk.StateExpired, 20*time.Second)
	_, err = check.Sync(eph)
	require.NoError(t, err)
	ok, _, err := check.Exists(eph)
	require.NoError(t, err)
	require.False(t, ok)
	out, err := ext.FourLetter(0, "ruok")
	require.NoError(t, err)
	require.Equal(t, "imok", out)
}
