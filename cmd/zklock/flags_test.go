package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseDefaults(t *testing.T) {
	inv, err := parseArgs([]string{"lock", "nightly-backup", "backup.sh", "-x"}, envMap(nil))
	require.NoError(t, err)
	assert.Equal(t, "lock", inv.verb.name)
	assert.Equal(t, "/locks/nightly-backup", inv.path)
	assert.Equal(t, []string{"backup.sh", "-x"}, inv.cmd)
	assert.Equal(t, config{
		servers:        []string{"127.0.0.1:2181"},
		sessionTimeout: 10 * time.Second,
		timeout:        0,
		killGrace:      5 * time.Second,
		onUnreachable:  "fail",
		logFormat:      "text",
		conflictExit:   3,
		lostExit:       4,
	}, inv.cfg)
}

func TestParseEnvAndFlagPrecedence(t *testing.T) {
	env := envMap(map[string]string{
		"ZKLOCK_SERVERS":         "zk1:2181, zk2:2181,",
		"ZKLOCK_SESSION_TIMEOUT": "4s",
		"ZKLOCK_TIMEOUT":         "30s",
		"ZKLOCK_AUTH":            "digest:env:pw",
		"ZKLOCK_ON_UNREACHABLE":  "run",
	})
	inv, err := parseArgs([]string{"lock", "x"}, env)
	require.NoError(t, err)
	assert.Equal(t, []string{"zk1:2181", "zk2:2181"}, inv.cfg.servers)
	assert.Equal(t, 4*time.Second, inv.cfg.sessionTimeout)
	assert.Equal(t, 30*time.Second, inv.cfg.timeout)
	assert.Equal(t, &authSpec{scheme: "digest", cred: []byte("env:pw")}, inv.cfg.auth)
	assert.Equal(t, "run", inv.cfg.onUnreachable)
	assert.Empty(t, inv.cmd)

	// Flags win over the environment, before or after the verb.
	inv, err = parseArgs([]string{"--servers", "a:1", "--timeout=0", "lock", "--session-timeout", "2s",
		"x", "--auth", "digest:flag:pw", "--on-unreachable", "fail", "--", "cmd"}, env)
	require.NoError(t, err)
	assert.Equal(t, []string{"a:1"}, inv.cfg.servers)
	assert.Equal(t, 2*time.Second, inv.cfg.sessionTimeout)
	assert.Equal(t, time.Duration(0), inv.cfg.timeout)
	assert.Equal(t, &authSpec{scheme: "digest", cred: []byte("flag:pw")}, inv.cfg.auth)
	assert.Equal(t, "fail", inv.cfg.onUnreachable)
	assert.Equal(t, []string{"cmd"}, inv.cmd)

	// An empty variable counts as unset; an invalid one is a usage error
	// naming the variable, unless the flag overrides it.
	inv, err = parseArgs([]string{"lock", "x"}, envMap(map[string]string{"ZKLOCK_TIMEOUT": ""}))
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), inv.cfg.timeout)
	_, err = parseArgs([]string{"lock", "x"}, envMap(map[string]string{"ZKLOCK_TIMEOUT": "soon"}))
	assertUsage(t, err, "ZKLOCK_TIMEOUT")
	inv, err = parseArgs([]string{"--timeout", "1s", "lock", "x"}, envMap(map[string]string{"ZKLOCK_TIMEOUT": "soon"}))
	require.NoError(t, err)
	assert.Equal(t, time.Second, inv.cfg.timeout)
}

func TestParseFlagPositions(t *testing.T) {
	tests := []struct {
		args    []string
		path    string
		cmd     []string
		try, v  bool
		timeout time.Duration
	}{
		{args: []string{"--try", "lock", "p", "c"}, path: "/locks/p", cmd: []string{"c"}, try: true},
		{args: []string{"lock", "--try", "p", "c"}, path: "/locks/p", cmd: []string{"c"}, try: true},
		{args: []string{"lock", "p", "--try", "-v", "c", "--try"}, path: "/locks/p", cmd: []string{"c", "--try"}, try: true, v: true},
		{args: []string{"lock", "p", "--", "--try"}, path: "/locks/p", cmd: []string{"--try"}},
		{args: []string{"lock", "--", "-p", "c"}, path: "/locks/-p", cmd: []string{"c"}},
		{args: []string{"-timeout", "2s", "lock", "/abs/p"}, path: "/abs/p", timeout: 2 * time.Second},
		{args: []string{"lock", "a/b", "sh", "-c", "exit 3"}, path: "/locks/a/b", cmd: []string{"sh", "-c", "exit 3"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			inv, err := parseArgs(tt.args, envMap(nil))
			require.NoError(t, err)
			assert.Equal(t, tt.path, inv.path)
			assert.Equal(t, tt.cmd, inv.cmd)
			assert.Equal(t, tt.try, inv.cfg.try)
			assert.Equal(t, tt.v, inv.cfg.verbose)
			assert.Equal(t, tt.timeout, inv.cfg.timeout)
		})
	}
}

func TestParseStatus(t *testing.T) {
	for _, args := range [][]string{
		{"status", "p", "--json"},
		{"status", "--json", "p"},
		{"--servers", "s:1", "status", "p", "--json", "-v"},
	} {
		inv, err := parseArgs(args, envMap(nil))
		require.NoError(t, err, args)
		assert.True(t, inv.opts.json, args)
		assert.Equal(t, "/locks/p", inv.path)
	}
	inv, err := parseArgs([]string{"status", "/x"}, envMap(nil))
	require.NoError(t, err)
	assert.False(t, inv.opts.json)
	_, err = parseArgs([]string{"status", "p", "extra"}, envMap(nil))
	assertUsage(t, err, "unexpected argument")
	inv, err = parseArgs([]string{"--json", "status", "p"}, envMap(nil)) // a verb's flag before the verb
	require.NoError(t, err)
	assert.True(t, inv.opts.json)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing verb"},
		{[]string{"--try"}, "missing verb"},
		{[]string{"frobnicate", "p"}, "unknown verb"},
		{[]string{"lock"}, "missing PATH"},
		{[]string{"lock", ""}, "empty PATH"},
		{[]string{"lock", "/"}, `invalid PATH "/": the root cannot be a lock`},
		{[]string{"lock", "a//b"}, `invalid PATH "a//b" (znode "/locks/a//b"): empty element (//)`},
		{[]string{"lock", "a/"}, `invalid PATH "a/" (znode "/locks/a/"): ends with /`},
		{[]string{"lock", "/a/../b"}, `invalid PATH "/a/../b": relative element ..`},
		{[]string{"lock", "./a"}, `invalid PATH "./a" (znode "/locks/./a"): relative element .`},
		{[]string{"lock", "a\x00b"}, `invalid PATH "a\x00b" (znode "/locks/a\x00b"): character U+0000 at byte 8 is not allowed`},
		{[]string{"status", "/zookeeper/quota"}, "under /zookeeper, ZooKeeper's reserved tree"},
		{[]string{"--bogus", "lock", "p"}, "bogus"},
		{[]string{"lock", "p", "--bogus"}, "bogus"},
		{[]string{"--timeout", "-1s", "lock", "p"}, "--timeout"},
		{[]string{"--timeout", "1", "lock", "p"}, "--timeout"},
		{[]string{"--session-timeout", "0", "lock", "p"}, "--session-timeout"},
		{[]string{"--kill-grace", "x", "lock", "p"}, "--kill-grace"},
		{[]string{"--servers", " , ", "lock", "p"}, "--servers"},
		{[]string{"--servers", "127.0.0.1:99999", "lock", "p"}, `"127.0.0.1:99999": port "99999" is not a number from 1 to 65535`},
		{[]string{"--servers", "zk1:2181,zk2:0", "lock", "p"}, `port "0"`},
		{[]string{"--servers", "zk1:http", "lock", "p"}, `port "http"`},
		{[]string{"--servers", ":2181", "lock", "p"}, "no host"},
		{[]string{"--servers", "::1", "lock", "p"}, "want HOST:PORT"},
		{[]string{"help", "bogus"}, `help: unknown verb "bogus" (verbs: lock, read, write, semaphore, elect, status, revoke, ui, ls, fence, completion, man)`},
		{[]string{"help", "lock", "extra"}, `help: unexpected argument "extra"`},
		{[]string{"--auth", "digest", "lock", "p"}, "--auth"},
		{[]string{"--auth", ":cred", "lock", "p"}, "--auth"},
		{[]string{"--on-unreachable", "maybe", "lock", "p"}, "--on-unreachable"},
		{[]string{"status"}, "missing PATH"},
	}
	for _, tt := range tests {
		_, err := parseArgs(tt.args, envMap(nil))
		assertUsage(t, err, tt.want)
	}
}

func TestParseVerbsNotYetAvailable(t *testing.T) {
	for _, v := range verbs {
		if v.available() {
			continue
		}
		_, err := parseArgs([]string{v.name, "p", "true"}, envMap(nil))
		assertUsage(t, err, "not yet available")
		assert.Equal(t, exitUsage, exitCode(err))
	}
}

func TestParseHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"lock", "-h"}, {"status", "p", "--help"}} {
		_, err := parseArgs(args, envMap(nil))
		assert.ErrorIs(t, err, errHelp, args)
	}
}

func assertUsage(t *testing.T, err error, contains string) {
	t.Helper()
	var ue *usageError
	require.ErrorAs(t, err, &ue)
	assert.Contains(t, err.Error(), contains)
	assert.Equal(t, exitUsage, exitCode(err))
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{usagef("x"), exitUsage},
		{fmt.Errorf("w: %w", zklock.ErrInvalidPath), exitUsage},
		{zklock.ErrInvalidArgument, exitUsage},
		{zklock.ErrLocked, exitNotAcquired},
		{context.DeadlineExceeded, exitNotAcquired},
		{&interrupted{}, exitNotAcquired},
		{fmt.Errorf("%w at x within 1s", errUnreachable), exitError},
		{fmt.Errorf("%w: %w", zklock.ErrLost, zklock.ErrSessionExpired), exitLost},
		{zklock.ErrSessionExpired, exitError},
		{fmt.Errorf("create: %w", zk.ErrNoAuth), exitError},
		{errors.New("other"), exitError},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, exitCode(tt.err), "%v", tt.err)
	}
}

func TestStatusFormatting(t *testing.T) {
	assert.Equal(t, "0x1000a2b3c4d0001", sessionHex(0x1000a2b3c4d0001))
	assert.Equal(t, "0x0", sessionHex(0))
	assert.Equal(t, "0xffffffffffffffff", sessionHex(-1))
	assert.Equal(t, "10.0.0.7", dataText([]byte("10.0.0.7")))
	assert.Equal(t, "", dataText(nil))
	assert.Equal(t, "/w==", dataText([]byte{0xff}))
	assert.Equal(t, "grüße", dataText([]byte("grüße")))
	assert.Equal(t, `"a\tb"`, printable("a\tb"))

	var b bytes.Buffer
	require.NoError(t, writeStatusJSON(&b, newStatus("/locks/e", nil)))
	assert.JSONEq(t, `{"path": "/locks/e", "participants": []}`, b.String())
	b.Reset()
	require.NoError(t, writeStatusJSON(&b, newStatus("/locks/e", []zklock.Participant{{
		Node: "n-lock-0000000007", Kind: zklock.KindLock, Sequence: 7, Token: 4294967311,
		Session: 0x1000a2b3c4d0001, Holds: true, Data: []byte("<10.0.0.7>"),
	}})))
	assert.Equal(t, `{"path":"/locks/e","participants":[{"node":"n-lock-0000000007","kind":"lock","sequence":7,`+
		`"fencing_token":4294967311,"session":"0x1000a2b3c4d0001","holds":true,"data":"<10.0.0.7>"}]}`,
		compactJSON(t, b.Bytes()))
}

func TestChildEnv(t *testing.T) {
	base := []string{"HOME=/h", "ZKLOCK_NODE=/old", "ZKLOCK_UNLOCKED=1", "ZKLOCK_SERVERS=s:1", "ZKLOCK_PATHX=keep",
		"ZKLOCK_NAMESPACE=inherited", "ZKLOCK_FENCING_ERA=inherited"}
	got := childEnv(base, "", "/locks/p", "/locks/p/n-lock-0000000001", 4294967311, "0b7e")
	assert.Equal(t, []string{"HOME=/h", "ZKLOCK_SERVERS=s:1", "ZKLOCK_PATHX=keep",
		"ZKLOCK_PATH=/locks/p", "ZKLOCK_NODE=/locks/p/n-lock-0000000001", "ZKLOCK_FENCING_TOKEN=4294967311",
		"ZKLOCK_FENCING_ERA=0b7e"}, got,
		"no namespace: an inherited ZKLOCK_NAMESPACE is not passed on")
	got = childEnv(base, "app/sub", "/locks/p", "/locks/p/n-lock-0000000001", 7, "")
	assert.Equal(t, []string{"HOME=/h", "ZKLOCK_SERVERS=s:1", "ZKLOCK_PATHX=keep", "ZKLOCK_NAMESPACE=app/sub",
		"ZKLOCK_PATH=/locks/p", "ZKLOCK_NODE=/locks/p/n-lock-0000000001", "ZKLOCK_FENCING_TOKEN=7"}, got,
		"an era that could not be read is not passed on, nor an inherited one")
	got = childEnv(base, "app", "/locks/p", "", 0, "")
	assert.Equal(t, []string{"HOME=/h", "ZKLOCK_SERVERS=s:1", "ZKLOCK_PATHX=keep", "ZKLOCK_NAMESPACE=app",
		"ZKLOCK_PATH=/locks/p", "ZKLOCK_UNLOCKED=1"}, got)
}

func TestParseNamespace(t *testing.T) {
	inv, err := parseArgs([]string{"--namespace", "app", "lock", "x"}, envMap(nil))
	require.NoError(t, err)
	assert.Equal(t, "app", inv.cfg.namespace)
	assert.Equal(t, "/locks/x", inv.path, "PATH is relative to the namespace")

	inv, err = parseArgs([]string{"status", "/a/b", "--namespace", "app/sub"}, envMap(map[string]string{"ZKLOCK_NAMESPACE": "env"}))
	require.NoError(t, err)
	assert.Equal(t, "app/sub", inv.cfg.namespace, "the flag wins")
	inv, err = parseArgs([]string{"revoke", "/a/b-lock-0000000001"}, envMap(map[string]string{"ZKLOCK_NAMESPACE": "env"}))
	require.NoError(t, err)
	assert.Equal(t, "env", inv.cfg.namespace)
	inv, err = parseArgs([]string{"--namespace", "", "elect", "p"}, envMap(map[string]string{"ZKLOCK_NAMESPACE": "env"}))
	require.NoError(t, err)
	assert.Equal(t, "", inv.cfg.namespace, "an empty --namespace is none, and wins")

	for _, ns := range []string{"/app", "app/", "a//b", "a/../b", ".", "a\x00b", "a\u0001"} {
		_, err := parseArgs([]string{"--namespace", ns, "lock", "p"}, envMap(nil))
		assertUsage(t, err, "invalid --namespace")
	}
	_, err = parseArgs([]string{"lock", "p"}, envMap(map[string]string{"ZKLOCK_NAMESPACE": "/bad"}))
	assertUsage(t, err, "invalid ZKLOCK_NAMESPACE")
}

func TestUsageListsContract(t *testing.T) {
	var b bytes.Buffer
	writeUsage(&b)
	u := b.String()
	for _, v := range verbs {
		assert.Contains(t, u, "  "+v.name+" ")
	}
	for _, s := range []string{"--servers", "--session-timeout", "--timeout", "--try", "--kill-grace", "--auth",
		"--on-unreachable", "-v", "--json", "ZKLOCK_SERVERS", "ZKLOCK_SESSION_TIMEOUT", "ZKLOCK_TIMEOUT",
		"ZKLOCK_AUTH", "ZKLOCK_ON_UNREACHABLE", "ZKLOCK_PATH", "ZKLOCK_NODE", "ZKLOCK_FENCING_TOKEN",
		"ZKLOCK_FENCING_ERA", "127.0.0.1:2181", "(default 10s)", "(default 5s)", "/locks/", "128+S"} {
		assert.Contains(t, u, s)
	}
	for code := range 5 {
		assert.Contains(t, u, fmt.Sprintf("\n  %d ", code), "exit %d", code)
	}
	unavailable := slices.ContainsFunc(verbs, func(v *verb) bool { return !v.available() })
	assert.Equal(t, unavailable, strings.Contains(u, "[not yet available]"))
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	require.NoError(t, json.Compact(&out, b))
	return out.String()
}

func TestWriteLeader(t *testing.T) {
	inv := &invocation{path: "/locks/jobs"}
	p := zklock.Participant{Node: "_c_x-latch-0000000004", Path: "/locks/jobs/_c_x-latch-0000000004", Kind: zklock.KindLatch,
		Sequence: 4, Token: 4294967330, Session: 0x1000a2b3c4d0002, Holds: true, Data: []byte("host a")}
	tests := []struct {
		data []byte
		want string
	}{
		{[]byte("host a"), "leader /locks/jobs/_c_x-latch-0000000004 4294967330 host a\n"},
		{nil, "leader /locks/jobs/_c_x-latch-0000000004 4294967330\n"},
		{[]byte("a\nb"), "leader /locks/jobs/_c_x-latch-0000000004 4294967330 \"a\\nb\"\n"},
		{[]byte{0xff, 0xfe}, "leader /locks/jobs/_c_x-latch-0000000004 4294967330 //4=\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		q := p
		q.Data = tt.data
		require.NoError(t, writeLeader(&b, inv, q))
		assert.Equal(t, tt.want, b.String())
	}
	var b bytes.Buffer
	require.NoError(t, writeLeader(&b, inv, zklock.Participant{}))
	assert.Equal(t, "no leader\n", b.String())

	inv.opts.json = true
	b.Reset()
	require.NoError(t, writeLeader(&b, inv, p))
	require.NoError(t, writeLeader(&b, inv, zklock.Participant{}))
	inv.cfg.namespace = "app"
	require.NoError(t, writeLeader(&b, inv, zklock.Participant{}))
	assert.Equal(t, `{"path":"/locks/jobs","leader":{"node":"_c_x-latch-0000000004","kind":"latch","sequence":4,`+
		`"fencing_token":4294967330,"session":"0x1000a2b3c4d0002","id":"host a"}}`+"\n"+
		`{"path":"/locks/jobs","leader":null}`+"\n"+
		`{"path":"/locks/jobs","namespace":"app","leader":null}`+"\n", b.String(), "one object per line")
}

func TestStatusNamespaceJSON(t *testing.T) {
	st := newStatus("/locks/e", nil)
	st.Namespace = "app"
	var b bytes.Buffer
	require.NoError(t, writeStatusJSON(&b, st))
	assert.Equal(t, `{"path":"/locks/e","namespace":"app","participants":[]}`, compactJSON(t, b.Bytes()))
	b.Reset()
	require.NoError(t, writeStatusTable(&b, st))
	assert.Equal(t, "/locks/e (namespace app): 0 participant(s)\n", b.String())
}
