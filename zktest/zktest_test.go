package zktest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/proc"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock/zktest"
)

// dirs records every member directory this binary's clusters used, so
// TestMain can look for servers that outlived their test.
var dirs struct {
	sync.Mutex
	list []string
}

func track(c *zktest.Cluster) *zktest.Cluster {
	dirs.Lock()
	defer dirs.Unlock()
	for i := range c.Size() {
		if d := c.DataDir(i); d != "" {
			dirs.list = append(dirs.list, d)
		}
	}
	return c
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		// go-zookeeper's goroutines end shortly after Close returns;
		// goleak.Find retries for a while, so no ignore list is needed.
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	if left := leftoverJava(); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "ZooKeeper servers outlived their tests: %v\n", left)
		code = 1
	}
	if pids := zktest.RunningServers(); len(pids) > 0 {
		fmt.Fprintf(os.Stderr, "zktest.RunningServers() = %v after all tests\n", pids)
		code = 1
	}
	os.Exit(code)
}

// leftoverJava scans /proc for java processes whose command line names a
// member directory of this run.
func leftoverJava() []string {
	dirs.Lock()
	defer dirs.Unlock()
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if !bytes.Contains(cl, []byte("java")) {
			continue
		}
		for _, d := range dirs.list {
			if bytes.Contains(cl, []byte(d+"/")) {
				out = append(out, e.Name()+" "+d)
			}
		}
	}
	return out
}

// stateRecorder is a zk event callback that queues session states for the
// test goroutine; it never blocks go-zookeeper.
type stateRecorder chan zk.State

func newStates() stateRecorder { return make(chan zk.State, 256) }

func (s stateRecorder) option() zktest.ConnOption {
	return zk.WithEventCallback(func(ev zk.Event) {
		if ev.Type != zk.EventSession {
			return
		}
		select {
		case s <- ev.State:
		default:
		}
	})
}

// wait consumes states until want arrives, failing after d.
func (s stateRecorder) wait(t *testing.T, want zk.State, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	var seen []zk.State
	for {
		select {
		case st := <-s:
			if st == want {
				return
			}
			seen = append(seen, st)
		case <-timer.C:
			t.Fatalf("no %v within %v; saw %v", want, d, seen)
		}
	}
}

func TestIntegration_Standalone(t *testing.T) {
	var logs proc.Buffer
	c := track(zktest.Start(t, zktest.WithLogOutput(&logs)))
	require.Len(t, c.Servers(), c.Size())
	if c.Backend() == "local" {
		require.Equal(t, 1, c.Size())
		require.True(t, strings.HasPrefix(c.Servers()[0], "127.0.0.1:"), c.Servers())
	}

	out, err := c.FourLetter(0, "ruok")
	require.NoError(t, err)
	require.Equal(t, "imok", out)
	if c.Backend() == "local" {
		leader, err := c.Leader()
		require.NoError(t, err)
		require.Equal(t, 0, leader)
		require.Contains(t, logs.String(), "zk1 ", "server logs were not forwarded")
	}

	conn := c.Connect(t, 2*time.Second)
	path := testRoot(t, conn) + "/node"
	_, err = conn.Create(path, []byte("v1"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	data, _, err := conn.Get(path)
	require.NoError(t, err)
	require.Equal(t, "v1", string(data))
	timeout, ok := c.SessionTimeout(conn.SessionID())
	require.True(t, ok, "session not recorded by the dialer")
	require.Equal(t, 2*time.Second, timeout)
}

func TestIntegration_EnsembleServes(t *testing.T) {
	c := track(zktest.StartEnsemble(t))
	require.Len(t, strings.Split(c.ConnectString(), ","), c.Size())
	if c.Backend() == "local" {
		require.Equal(t, 3, c.Size())
		modes := map[string]int{}
		for i := range c.Size() {
			out, err := c.FourLetter(i, "srvr")
			require.NoError(t, err)
			for _, line := range strings.Split(out, "\n") {
				if m, ok := strings.CutPrefix(line, "Mode: "); ok {
					modes[m]++
				}
			}
		}
		require.Equal(t, map[string]int{"leader": 1, "follower": 2}, modes)
	}
	// A write through one member is visible through every other one.
	w := c.ConnectTo(t, c.Servers()[:1], 4*time.Second)
	path := testRoot(t, w) + "/node"
	_, err := w.Create(path, []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for i := 1; i < c.Size(); i++ {
		r := c.ConnectTo(t, c.Servers()[i:i+1], 4*time.Second)
		_, err := r.Sync(path)
		require.NoError(t, err)
		ok, _, err := r.Exists(path)
		require.NoError(t, err)
		require.True(t, ok, "member %d does not see %s", i, path)
	}
}

// testRoot creates a persistent node private to this test (tests may share
// an ensemble under ZK_SERVERS) and deletes it and its children at cleanup.
func testRoot(t *testing.T, conn *zk.Conn) string {
	t.Helper()
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	root := "/zktest-" + name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	_, err := conn.Create(root, nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	t.Cleanup(func() {
		kids, _, _ := conn.Children(root)
		for _, k := range kids {
			_ = conn.Delete(root+"/"+k, -1)
		}
		_ = conn.Delete(root, -1)
	})
	return root
}

func waitServing(t *testing.T, c *zktest.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.WaitServing(ctx))
}
