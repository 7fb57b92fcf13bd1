package zklock_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/badpeer"
	"github.com/zklock/zklock/zktest"
)

// plantLongNames creates, as a client with no credentials, n children of
// dir with names of size bytes: what anyone may do in a world-open lock
// directory.
func plantLongNames(t *testing.T, c *zktest.Cluster, dir string, n, size int) {
	t.Helper()
	conn := c.Connect(t, 30*time.Second) // 750 KB writes take seconds on a loaded machine
	for _, p := range []string{"/locks", dir} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			require.NoError(t, err)
		}
	}
	for i := range n {
		name := fmt.Sprintf("%s/%c%s", dir, 'a'+i, strings.Repeat("w", size-1))
		for range 5 { // a create cut off with the connection is tried again
			_, err := conn.Create(name, nil, 0, zk.WorldACL(zk.PermAll))
			if errors.Is(err, zk.ErrConnectionClosed) {
				continue
			}
			if !errors.Is(err, zk.ErrNodeExists) {
				require.NoError(t, err)
			}
			break
		}
	}
}

// A directory whose listing is over the session's bound (three 750 KB
// names planted by a client with no credentials, against a bound of
// 1 MiB) fails the requests that list it, at once and for good, naming the
// path and the reply's length; it is never "unreachable", never runs
// without the lock, and costs the session nothing: another hold on it,
// with a loss limit of 0, stays held, and the session never suspends.
func TestIntegration_ReplyOverTheBoundFailsOnlyItsRequest(t *testing.T) {
	c := zktest.Start(t)
	var states stateLog
	// A 10 s session: on a loaded machine a 2 s one suspends on its own
	// (a stall past its 1.3 s read timeout), and a loss limit of 0 would
	// take that for the reply's doing.
	s := connect(t, c, zklock.WithSessionTimeout(10*time.Second), zklock.WithMaxReply(1<<20), zklock.WithLossLimit(0),
		zklock.WithObserver(states.observe))
	held, err := newMutex(t, s, "/locks/held").Lock(ctxTimeout(t, 10*time.Second))
	require.NoError(t, err)
	plantLongNames(t, c, "/locks/wedge", 3, 750_000)
	before := states.len()

	start := time.Now()
	for name, m := range map[string]*zklock.Mutex{
		"lock":      newMutex(t, s, "/locks/wedge"),
		"fail-open": newMutex(t, s, "/locks/wedge", zklock.WithFailOpen(100*time.Millisecond)),
	} {
		h, err := m.Lock(context.Background()) // no deadline: it must end by itself
		require.Nil(t, h, name)
		require.ErrorIs(t, err, zklock.ErrReplyTooLong, name)
		require.NotErrorIs(t, err, zklock.ErrUnreachable, name)
		require.NotErrorIs(t, err, zklock.ErrUnlocked, name)
		require.Contains(t, err.Error(), "/locks/wedge", name)
		require.Regexp(t, `reply is 2250\d{3} bytes`, err.Error(), name)

		h, err = m.TryLock(context.Background())
		require.Nil(t, h, name)
		require.ErrorIs(t, err, zklock.ErrReplyTooLong, name)
	}
	_, err = zklock.Participants(context.Background(), s, "/locks/wedge")
	require.ErrorIs(t, err, zklock.ErrReplyTooLong)
	t.Logf("four acquires and a listing refused in %v", time.Since(start))

	select {
	case <-held.Done():
		t.Fatalf("the other hold was lost: %v", held.Err())
	default:
	}
	require.Equal(t, zklock.StateConnected, s.State())
	require.Empty(t, states.since(before), "the session's state changed")
	require.NoError(t, held.Release())
	require.Equal(t, []string{"a" + strings.Repeat("w", 749_999), "b" + strings.Repeat("w", 749_999), "c" + strings.Repeat("w", 749_999)},
		children(t, c.Connect(t, 10*time.Second), "/locks/wedge"), "no node of ours is left behind")
}

// violatingDialer dials through d; once armed, every new connection,
// right after its handshake, receives bad before anything else: a server
// that grants sessions and then breaks the protocol.
type violatingDialer struct {
	d     zk.Dialer
	bad   []byte
	mu    sync.Mutex
	armed bool
	conns []net.Conn
}

func (v *violatingDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := v.d(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.conns = append(v.conns, c)
	return &violatingConn{Conn: c, bad: v.armed, v: v}, nil
}

// arm makes every later connection violate, and ends the ones open.
func (v *violatingDialer) arm(bad []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.armed, v.bad = true, bad
	for _, c := range v.conns {
		_ = c.Close()
	}
}

type violatingConn struct {
	net.Conn
	bad   bool
	v     *violatingDialer
	read  int64 // bytes read so far
	shake int64 // the handshake frame's length, once known
}

func (c *violatingConn) Read(p []byte) (int, error) {
	if c.bad && c.shake > 0 && c.read == c.shake {
		c.read++                     // once
		return copy(p, c.v.bad), nil // short: it fits in one read
	}
	limit := len(p)
	if c.shake > 0 && c.read < c.shake { // stop at the handshake's end
		limit = min(limit, int(c.shake-c.read))
	}
	n, err := c.Conn.Read(p[:limit])
	if c.shake == 0 && c.read < 4 && c.read+int64(n) >= 4 {
		var l [4]byte
		copy(l[c.read:], p[:4-c.read])
		c.shake = 4 + int64(binary.BigEndian.Uint32(l[:]))
	}
	c.read += int64(n)
	return n, err
}

// "Unreachable" means no server could be reached: no connection, or no
// answer to the handshake. Each class of failure against that boundary:
// whether an acquire's error wraps ErrUnreachable, and whether WithFailOpen
// runs without the lock on it.
func TestIntegration_OnlyAnUnreachableZooKeeperIsUnreachable(t *testing.T) {
	t.Parallel()
	shortFrame := append(binary.BigEndian.AppendUint32(nil, 8), make([]byte, 8)...)
	bigNotification := binary.BigEndian.AppendUint32(nil, 1<<30)
	bigNotification = binary.BigEndian.AppendUint32(bigNotification, 0xffffffff) // xid -1
	bigNotification = append(bigNotification, make([]byte, 12)...)
	type setup func(t *testing.T) (*zklock.Session, string)
	hostile := func(bad []byte) setup {
		return func(t *testing.T) (*zklock.Session, string) {
			c := zktest.Start(t)
			v := &violatingDialer{d: c.Dialer()}
			s := connect(t, c, zklock.WithDialer(v.dial))
			v.arm(bad)
			return s, "/locks/hostile"
		}
	}
	cases := []struct {
		name        string
		setup       setup
		unreachable bool  // the acquire's error wraps ErrUnreachable, and fail-open runs
		want        error // else: what the error wraps
	}{
		{"nothing listens", func(t *testing.T) (*zklock.Session, string) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			addr := l.Addr().String()
			require.NoError(t, l.Close())
			return unconnected(t, addr), "/locks/refused"
		}, true, nil},
		{"accepts and never answers", func(t *testing.T) (*zklock.Session, string) {
			c := zktest.Start(t)
			p := c.Proxy(t)
			s := connect(t, c, zklock.WithDialer(p.Dialer()))
			p.Blackhole()
			t.Cleanup(p.Heal)
			return s, "/locks/blackhole"
		}, true, nil},
		{"not ZooKeeper", func(t *testing.T) (*zklock.Session, string) {
			return unconnected(t, badpeer.Replying(t, badpeer.HTTP400)), "/locks/http"
		}, false, zklock.ErrNotZooKeeper},
		{"reply over the bound", func(t *testing.T) (*zklock.Session, string) {
			c := zktest.Start(t)
			plantLongNames(t, c, "/locks/long", 3, 750_000)
			return connect(t, c, zklock.WithMaxReply(1<<20)), "/locks/long"
		}, false, zklock.ErrReplyTooLong},
		{"frame shorter than a header", hostile(shortFrame), false, zklock.ErrProtocol},
		{"notification over the bound", hostile(bigNotification), false, zklock.ErrReplyTooLong},
		{"credentials refused", func(t *testing.T) (*zklock.Session, string) {
			c := zktest.Start(t)
			s, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()), zklock.WithSessionTimeout(sessionTimeout),
				zklock.WithAuth("nosuchscheme", []byte("x")))
			require.NoError(t, err)
			t.Cleanup(func() { _ = s.Close() })
			return s, "/locks/auth"
		}, false, zklock.ErrNotAuthorized},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each waits out its own deadlines
			s, path := tc.setup(t)
			_, err := newMutex(t, s, path).Lock(ctxTimeout(t, 3*time.Second))
			t.Logf("lock: %v", err)
			require.Error(t, err)
			h, ferr := newMutex(t, s, path, zklock.WithFailOpen(200*time.Millisecond)).Lock(ctxTimeout(t, 3*time.Second))
			t.Logf("fail-open: %v", ferr)
			if tc.unreachable {
				require.ErrorIs(t, err, zklock.ErrUnreachable)
				require.ErrorIs(t, ferr, zklock.ErrUnlocked)
				require.NotNil(t, h)
				require.NoError(t, h.Release())
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.NotErrorIs(t, err, zklock.ErrUnreachable)
			require.Nil(t, h, "WithFailOpen ran without the lock")
			require.ErrorIs(t, ferr, tc.want)
			require.NotErrorIs(t, ferr, zklock.ErrUnreachable)
			require.NotErrorIs(t, ferr, zklock.ErrUnlocked)
		})
	}
}

// unconnected is a session on addr that has not (and may never have)
// connected.
func unconnected(t *testing.T, addr string) *zklock.Session {
	s, err := zklock.Connect([]string{addr}, zklock.WithSessionTimeout(sessionTimeout))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// A lock directory of 100,000 children with 24-byte names (a 2.8 MB
// listing) is locked, waited in and released, on the server's defaults
// and the session's.
func TestIntegration_LockInAHundredThousandChildren(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	const dir, n = "/locks/large", 100_000
	conn := c.Connect(t, 30*time.Second)
	start := time.Now()
	fillDirectory(t, conn, dir, n)
	t.Logf("created %d children in %v", n, time.Since(start))

	s := connect(t, c)
	m := newMutex(t, s, dir)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start = time.Now()
	h, err := m.Lock(ctxTimeout(t, 30*time.Second))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	t.Logf("acquired in %v, %d MB allocated", took, (after.TotalAlloc-before.TotalAlloc)>>20)

	other := connect(t, c)
	done := make(chan error, 1)
	go func() {
		h2, err := newMutex(t, other, dir).Lock(ctxTimeout(t, 30*time.Second))
		if err == nil {
			err = h2.Release()
		}
		done <- err
	}()
	require.Eventually(t, func() bool { return len(children(t, conn, dir)) == n+2 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, h.Release())
	require.NoError(t, <-done)
	require.Len(t, children(t, conn, dir), n)
}

// fillDirectory creates dir with n children of 24-byte names, in
// multi requests of 1,000.
func fillDirectory(t testing.TB, conn *zk.Conn, dir string, n int) {
	t.Helper()
	if _, err := conn.Create("/locks", nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
		require.NoError(t, err)
	}
	_, err := conn.Create(dir, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for i := 0; i < n; i += 1000 {
		ops := make([]any, 0, 1000)
		for j := i; j < min(n, i+1000); j++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("%s/entry-%018x", dir, j), Data: nil, Acl: zk.WorldACL(zk.PermAll)})
		}
		_, err := conn.Multi(ops...)
		require.NoError(t, err)
	}
}
