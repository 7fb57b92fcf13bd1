//go:build unix

package main

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A lock directory reaped underneath (ZooKeeper reaps empty CONTAINERs,
// and 3.10 also those that never had a child: ZOOKEEPER-4915) reads as an
// empty lock in status and ls, and a lock on it re-creates it.
func TestIntegration_ReapedDirectoryIsEmpty(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	code, _, stderr := runZklock(t, env, "lock", "reaped", "true")
	require.Equal(t, exitOK, code, stderr)
	// The server reaps the empty directory within its container check
	// (100 ms here), or the test deletes it first: either way it is gone.
	if err := conn.Delete("/locks/reaped", -1); err != nil {
		require.ErrorIs(t, err, zk.ErrNoNode)
	}

	code, stdout, stderr := runZklock(t, env, "status", "reaped", "--json")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"participants": []`)
	code, stdout, stderr = runZklock(t, env, "status", "reaped")
	assert.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "/locks/reaped")
	code, _, stderr = runZklock(t, env, "ls")
	assert.Equal(t, exitOK, code, stderr)

	code, _, stderr = runZklock(t, env, "lock", "reaped", "true")
	assert.Equal(t, exitOK, code, "the lock re-creates its directory: %s", stderr)
}
