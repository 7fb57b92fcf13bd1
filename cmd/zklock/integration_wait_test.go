//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

// Integration tests of waiting: --try, --timeout, signals while waiting, and
// status with a holder and a waiter.

func TestIntegration_TryOnHeldLockExits3(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, node, _ := holder(t, env, "held")
	marker := filepath.Join(t.TempDir(), "ran")

	p := startZklock(t, env, "--try", "lock", "held", "sh", "-c", `touch "$0"`, marker)
	assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Less(t, p.dur, 5*time.Second, "--try waited")
	assert.Contains(t, p.stderr.String(), "held by another participant")
	assert.NoFileExists(t, marker, "CMD ran without the lock")
	assert.Equal(t, []string{filepath.Base(node)}, children(t, conn, "/locks/held"), "--try left a node")
}

func TestIntegration_TimeoutOnHeldLockExits3(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, node, _ := holder(t, env, "held")
	marker := filepath.Join(t.TempDir(), "ran")

	p := startZklock(t, env, "--timeout", "500ms", "lock", "held", "sh", "-c", `touch "$0"`, marker)
	assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
	assert.GreaterOrEqual(t, p.dur, 500*time.Millisecond)
	assert.Less(t, p.dur, 5*time.Second)
	assert.Contains(t, p.stderr.String(), "not acquired within 500ms")
	assert.NoFileExists(t, marker, "CMD ran without the lock")
	assert.Equal(t, []string{filepath.Base(node)}, children(t, conn, "/locks/held"), "the waiter's node was left behind")
}

func TestIntegration_SignalWhileWaitingExits3(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	_, node, _ := holder(t, env, "waiting")
	marker := filepath.Join(t.TempDir(), "ran")
	p := startZklock(t, env, "lock", "waiting", "sh", "-c", `touch "$0"`, marker)
	waitChildren(t, conn, "/locks/waiting", 2) // queued behind the holder

	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitNotAcquired, p.wait(t, 20*time.Second), p.stderr.String())
	assert.Contains(t, p.stderr.String(), "not acquired: interrupted by SIGTERM")
	assert.NoFileExists(t, marker)
	assert.Equal(t, []string{filepath.Base(node)}, children(t, conn, "/locks/waiting"), "the waiter's node was left behind")
}

// jsonKeys returns the keys of a JSON object in document order.
func jsonKeys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

func TestIntegration_StatusJSON(t *testing.T) {
	t.Parallel()
	c, conn, env := zkSetup(t)
	_, held, _ := holder(t, env, "st")
	startZklock(t, env, "lock", "st") // waits behind the holder
	names := waitChildren(t, conn, "/locks/st", 2)
	waiting := "/locks/st/" + names[0]
	if waiting == held {
		waiting = "/locks/st/" + names[1]
	}

	code, stdout, stderr := runZklock(t, env, "status", "st", "--json")
	require.Equal(t, exitOK, code, stderr)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &top))
	assert.Equal(t, []string{"path", "participants"}, jsonKeys(t, []byte(stdout)))
	var parts []json.RawMessage
	require.NoError(t, json.Unmarshal(top["participants"], &parts))
	require.Len(t, parts, 2)

	var want []string
	for i, node := range []string{held, waiting} {
		assert.Equal(t, []string{"node", "kind", "sequence", "fencing_token", "session", "holds", "data", "owner", "client"},
			jsonKeys(t, parts[i]))
		var p struct {
			Client struct{ Addr, Member string }
		}
		require.NoError(t, json.Unmarshal(parts[i], &p))
		assert.Regexp(t, `^127\.0\.0\.1:\d+$`, p.Client.Addr, "the holder's address, from cons")
		assert.Equal(t, c.Servers()[0], p.Client.Member)
		data, stat, err := conn.Get(node)
		require.NoError(t, err)
		seq, err := strconv.Atoi(node[len(node)-10:])
		require.NoError(t, err)
		owner, rest := zklock.OwnerOf(data) // zklock's owner line is shown apart
		require.NotEmpty(t, owner)
		want = append(want, fmt.Sprintf(`{"node":%q,"kind":"lock","sequence":%d,"fencing_token":%d,"session":"0x%x","holds":%t,"data":%q,"owner":%q}`,
			filepath.Base(node), seq, stat.Czxid, stat.EphemeralOwner, i == 0, rest, owner))
	}
	noClient := regexp.MustCompile(`,"client":\{[^}]*\}`)
	assert.Equal(t, `{"path":"/locks/st","participants":[`+strings.Join(want, ",")+`]}`, noClient.ReplaceAllString(compactJSON(t, []byte(stdout)), ""))

	// The table shows the same.
	code, stdout, stderr = runZklock(t, env, "status", "/locks/st")
	require.Equal(t, exitOK, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 4, stdout)
	assert.Equal(t, "/locks/st: 2 participant(s)", lines[0])
	assert.Equal(t, []string{"NODE", "KIND", "SEQUENCE", "FENCING_TOKEN", "SESSION", "CLIENT", "HOLDS", "DATA"}, strings.Fields(lines[1]))
	assert.Equal(t, filepath.Base(held), strings.Fields(lines[2])[0])
	assert.Regexp(t, `^127\.0\.0\.1:\d+`, strings.Fields(lines[2])[5])
	assert.Equal(t, "yes", strings.Fields(lines[2])[6])
	assert.Equal(t, filepath.Base(waiting), strings.Fields(lines[3])[0])
	assert.Equal(t, "-", strings.Fields(lines[3])[6])
	kind := strings.Index(lines[1], "KIND")
	for _, l := range lines[2:] {
		assert.Equal(t, "lock ", l[kind:kind+5], "columns not aligned:\n%s", stdout)
	}

	// A path that does not exist has no participants.
	code, stdout, stderr = runZklock(t, env, "status", "/no/such/lock", "--json")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, `{"path":"/no/such/lock","participants":[]}`, compactJSON(t, []byte(stdout)))
}
