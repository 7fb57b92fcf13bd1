package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

// zklock ls prints every lock under the root, as a table and as the JSON
// of /api/locks; a root that does not exist is said so (exit 0); bad flags
// are usage errors.
func TestIntegration_Ls(t *testing.T) {
	c, _, env := zkSetup(t)
	s := session(t, c)
	h := holdLock(t, s, "/locks/jobs/report", "worker-a")
	waitInBackground(t, session(t, c), "/locks/jobs/report", "worker-b")
	sem, err := zklock.NewSemaphore(s, "/locks/crawl", 3)
	require.NoError(t, err)
	ctx := t.Context()
	lease, err := sem.Acquire(ctx)
	require.NoError(t, err)
	defer lease.Release()

	var o lockview.Overview
	require.Eventually(t, func() bool {
		code, stdout, stderr := runZklock(t, env, "ls", "--json")
		require.Equal(t, exitOK, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(stdout), &o))
		return len(o.Locks) == 2 && o.Locks[1].Waiting == 1
	}, 20*time.Second, 100*time.Millisecond, "%+v", o)
	require.Equal(t, "/locks", o.Root)
	require.Equal(t, "/locks/crawl", o.Locks[0].Path)
	require.Equal(t, lockview.RecipeSemaphore, o.Locks[0].Recipe)
	require.Equal(t, lease.Token(), o.Locks[0].Token)
	require.Equal(t, "/locks/jobs/report", o.Locks[1].Path)
	require.Equal(t, "worker-a", o.Locks[1].Holders[0].ID)
	require.Equal(t, h.Token(), o.Locks[1].Token)

	code, stdout, stderr := runZklock(t, env, "ls")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Equal(t, "/locks: 2 lock(s), 2 held, 1 waiting", lines[0])
	require.Regexp(t, `^PATH\s+RECIPE\s+HOLDER\s+SESSION\s+CLIENT\s+HELD\s+TOKEN\s+WAITING\s+OLDEST_WAIT$`, lines[1])
	require.Regexp(t, fmt.Sprintf(`^/locks/jobs/report\s+mutex\s+worker-a\s+0x[0-9a-f]+\s+127\.0\.0\.1:\d+\S*\s+\S+\s+%d\s+1\s+\S+$`, h.Token()), lines[3])
	require.NotNil(t, o.Locks[1].Holders[0].Client, "the holder's client address, from cons")
	require.Regexp(t, `^127\.0\.0\.1:\d+$`, o.Locks[1].Holders[0].Client.Addr)
	require.Len(t, o.Ensemble, 1)
	require.Equal(t, "standalone", o.Ensemble[0].Mode)

	code, stdout, stderr = runZklock(t, env, "status", "jobs/report", "--json")
	require.Equal(t, exitOK, code, stderr)
	var st statusJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &st))
	require.Len(t, st.Participants, 2)
	for _, p := range st.Participants {
		require.NotNil(t, p.Client, "%+v", p)
		require.Regexp(t, `^127\.0\.0\.1:\d+$`, p.Client.Addr)
	}
	code, stdout, stderr = runZklock(t, env, "status", "jobs/report")
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^NODE\s+KIND\s+SEQUENCE\s+FENCING_TOKEN\s+SESSION\s+CLIENT\s+HOLDS\s+DATA\n.*\s127\.0\.0\.1:\d+`, stdout)

	code, stdout, stderr = runZklock(t, env, "ls", "--root", "/missing")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "/missing: 0 lock(s)")
	require.Contains(t, stdout, "note: /missing does not exist (yet)")

	for _, args := range [][]string{{"ls", "extra"}, {"ls", "--root", "relative"}, {"ui", "--listen", "nonsense"}, {"ui", "--root", "/a//b"}} {
		code, _, stderr := runZklock(t, env, args...)
		require.Equal(t, exitUsage, code, "%v: %s", args, stderr)
	}
}
