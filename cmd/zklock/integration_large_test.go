//go:build unix

package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// plant creates, with a connection that has no credentials, n children of
// dir named by name(i): what anyone may do in a world-open lock directory.
func plant(t *testing.T, conn *zk.Conn, dir string, n int, name func(int) string) {
	t.Helper()
	for _, p := range []string{"/locks", dir} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			require.NoError(t, err)
		}
	}
	batch := 1000
	if len(name(0)) > 1000 {
		batch = 1 // one long name per request: ZooKeeper's jute.maxbuffer bounds a request
	}
	for i := 0; i < n; i += batch {
		ops := make([]any, 0, batch)
		for j := i; j < min(n, i+batch); j++ {
			ops = append(ops, &zk.CreateRequest{Path: dir + "/" + name(j), Acl: zk.WorldACL(zk.PermAll)})
		}
		require.NoError(t, retryOnConnLoss(func() error { _, err := conn.Multi(ops...); return err }))
	}
}

// retryOnConnLoss runs f again when its request was cut off with the
// connection (a loaded machine's 750 KB writes), at most five times; a
// node found already there means the multi applied before the cut (a
// multi applies whole or not at all).
func retryOnConnLoss(f func() error) error {
	var err error
	for range 5 {
		err = f()
		switch {
		case errors.Is(err, zk.ErrNodeExists):
			return nil
		case !errors.Is(err, zk.ErrConnectionClosed) && !errors.Is(err, zk.ErrNoServer):
			return err
		}
	}
	return err
}

// A directory made large, by a hostile client or by use, never makes
// --on-unreachable run run CMD without the lock: the two reproductions of
// issue #45 (three 750 KB names planted beside a holder; 100,000 children
// of 24 bytes) while another process holds the lock. With a bound under
// the listing (--max-reply), the error names the cause and the path.
func TestIntegration_LargeDirectoriesNeverRunUnlocked(t *testing.T) {
	c, _, env := zkSetup(t)
	conn := c.Connect(t, 30*time.Second) // 750 KB writes take seconds on a loaded machine
	long := func(i int) string { return fmt.Sprintf("%c%s", 'a'+i, strings.Repeat("w", 749_999)) }
	short := func(i int) string { return fmt.Sprintf("entry-%018x", i) }
	cases := []struct {
		name string
		dir  string
		n    int
		node func(int) string
	}{
		{"planted 750 KB names", "/locks/wedge2", 3, long},
		{"100,000 children", "/locks/large", 100_000, short},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			holderProc, node, _ := holder(t, env, tc.dir)
			start := time.Now()
			plant(t, conn, tc.dir, tc.n, tc.node)
			t.Logf("planted %d children in %v", tc.n, time.Since(start))
			marker := filepath.Join(t.TempDir(), "ran")
			run := []string{"--", "sh", "-c", "touch " + marker}

			code, _, stderr := runZklock(t, env, append([]string{"--try", "--on-unreachable", "run", "lock", tc.dir}, run...)...)
			require.Equal(t, exitNotAcquired, code, stderr)
			require.Contains(t, stderr, tc.dir)
			require.NotContains(t, stderr, "WITHOUT the lock")
			require.NoFileExists(t, marker)

			code, _, stderr = runZklock(t, env, append([]string{"--max-reply", "1MiB", "--try", "--on-unreachable", "run",
				"lock", tc.dir}, run...)...)
			require.Equal(t, exitError, code, stderr)
			require.Contains(t, stderr, "reply too long")
			require.Contains(t, stderr, tc.dir)
			require.NotContains(t, stderr, "WITHOUT the lock")
			require.NoFileExists(t, marker)

			code, stdout, stderr := runZklock(t, env, "status", tc.dir)
			require.Equal(t, exitOK, code, stderr)
			require.Contains(t, stdout, node[strings.LastIndex(node, "/")+1:])

			require.NoError(t, holderProc.cmd.Process.Signal(syscall.SIGTERM))
			require.Equal(t, exitOK, holderProc.wait(t, 20*time.Second))
			code, _, stderr = runZklock(t, env, append([]string{"--timeout", "20s", "lock", tc.dir}, run...)...)
			require.Equal(t, exitOK, code, stderr)
			require.FileExists(t, marker, "CMD ran, with the lock")
		})
	}
}
