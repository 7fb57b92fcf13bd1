//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Deleting the holder's node (an operator forcing a handover) is a loss:
// `zklock lock` and `zklock elect` stop their child and exit 4, and the next
// contender takes over.
func TestIntegration_NodeDeletedStopsChildExits4(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	for _, verb := range []string{"lock", "elect"} {
		t.Run(verb, func(t *testing.T) {
			dir := t.TempDir()
			ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
			script := `trap 'echo TERM > "$1"; exit 0' TERM; echo "$ZKLOCK_NODE" > "$0"; while :; do sleep 0.05; done`
			path := "/deleted/" + verb
			args := []string{verb, path}
			if verb == "elect" {
				args = append(args, "--id", "first")
			}
			p := startZklock(t, env, append(args, "sh", "-c", script, ready, got)...)
			node := strings.TrimSpace(waitFile(t, ready))
			require.True(t, strings.HasPrefix(node, path+"/_c_"), node)
			next := startZklock(t, env, "lock", path) // queued behind, takes over
			waitChildren(t, conn, path, 2)

			start := time.Now()
			require.NoError(t, conn.Delete(node, -1))
			assert.Equal(t, exitLost, p.wait(t, 20*time.Second), p.stderr.String())
			assert.Less(t, time.Since(start), 5*time.Second)
			assert.Equal(t, "TERM\n", waitFile(t, got))
			assert.Contains(t, p.stderr.String(), "lock node deleted")
			line := next.firstLine(t)
			assert.True(t, strings.HasPrefix(line, path+"/_c_"), line)
		})
	}
}
