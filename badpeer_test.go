package zklock_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/badpeer"
)

// A server that is not ZooKeeper is a configuration error of its own kind,
// never "unreachable": waits fail with ErrNotZooKeeper and a *ConnectError,
// and WithFailOpen does not run without the lock on it. No reply makes the
// client allocate what a length prefix announces.
func TestNotZooKeeper(t *testing.T) {
	frame := func(payload ...byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(payload))), payload...)
	}
	cases := map[string]string{
		// One that waits for a line's end says nothing: as a hung server,
		// it is unreachable.
		"http":         badpeer.Replying(t, badpeer.HTTP400),
		"4 GiB length": badpeer.Replying(t, []byte{0xff, 0xff, 0xff, 0xff}),
		"2 GiB length": badpeer.Replying(t, []byte{0x7f, 0xff, 0xff, 0xff}),
		"short frame":  badpeer.Replying(t, frame(1, 2, 3, 4, 5, 6, 7, 8)),
	}
	bad := frame(make([]byte, 37)...)
	bad[4+3] = 9 // protocol version 9
	cases["bad version"] = badpeer.Replying(t, bad)
	for name, addr := range cases {
		t.Run(name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			s, err := zklock.Connect([]string{addr}, zklock.WithSessionTimeout(2*time.Second))
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
			defer cancel()
			err = s.WaitConnected(ctx)
			t.Logf("%s: %v", name, err)
			require.ErrorIs(t, err, zklock.ErrNotZooKeeper)
			var ce *zklock.ConnectError
			require.ErrorAs(t, err, &ce)
			require.Equal(t, addr, ce.Server)

			m, err := zklock.NewMutex(s, "/locks/not-zk", zklock.WithFailOpen(300*time.Millisecond))
			require.NoError(t, err)
			h, err := m.Lock(ctxTimeout(t, 3*time.Second))
			require.Nil(t, h, "WithFailOpen ran without the lock")
			require.ErrorIs(t, err, zklock.ErrNotZooKeeper)
			require.NotErrorIs(t, err, zklock.ErrUnlocked)
			require.NotErrorIs(t, err, zklock.ErrUnreachable)

			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated")
		})
	}
}

// Connect refuses a session timeout ZooKeeper's protocol cannot carry
// (go-zookeeper truncates it to int32 milliseconds) or too short to tell a
// server from an unreachable one, and server addresses that are not
// host:port.
func TestConnectRefusesBadConfiguration(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, 0, 500 * time.Microsecond, 99 * time.Millisecond, 597 * time.Hour, 600 * time.Hour} {
		_, err := zklock.Connect([]string{"127.0.0.1:1"}, zklock.WithSessionTimeout(d))
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "%v", d)
	}
	for _, d := range []time.Duration{zklock.MinSessionTimeout, 10 * time.Second, zklock.MaxSessionTimeout} {
		s, err := zklock.Connect([]string{"127.0.0.1:1"}, zklock.WithSessionTimeout(d))
		require.NoError(t, err, "%v", d)
		require.Equal(t, d, s.SessionTimeout())
		require.NoError(t, s.Close())
	}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"zk1", true}, {"zk1:2181", true}, {"zk-1.example.com.:2181", true}, {"10.0.0.1", true},
		{"[::1]:2181", true}, {"my_host:1", true},
		{";rm -rf /", false}, {"zk1:0", false}, {"zk1:65536", false}, {":2181", false}, {"", false},
		{"zk1:http", false}, {"a b:2181", false}, {"::1", false}, {"zk..x:2181", false},
		{"zk1\u202e:2181", false}, {"zk1\x85", false},
	} {
		err := zklock.ValidateServer(tc.addr)
		if tc.ok {
			require.NoError(t, err, tc.addr)
			continue
		}
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, tc.addr)
		_, err = zklock.Connect([]string{tc.addr})
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, tc.addr)
	}
}
