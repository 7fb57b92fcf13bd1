//go:build unix

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of what running zklock under a platform needs (issue #46): one log
// stream, exit statuses, the shell glue, the endpoints, --requeue's pace.

// jsonLines parses every line of stderr but those of skip (the child's
// own output) as a JSON object, failing the test on any other line.
func jsonLines(t *testing.T, stderr string, skip ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		if l == "" || slicesContains(skip, l) {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "a line zklock printed is not JSON: %q\nstderr:\n%s", l, stderr)
		require.Contains(t, m, "msg", l)
		require.Contains(t, m, "level", l)
		out = append(out, m)
	}
	return out
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// withMsg returns the records whose msg is msg.
func withMsg(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// withLevel returns the records at level.
func withLevel(recs []map[string]any, level string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["level"] == level {
			out = append(out, r)
		}
	}
	return out
}

func TestIntegration_LogFormatJSON(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	jsonArgs := []string{"--log-format", "json", "--log-level", "debug"}

	// A run with CMD: connecting, acquired, started, child exited, released,
	// and the library's own lines; the child's line is its own.
	code, _, stderr := runZklock(t, env, append(jsonArgs, "lock", "logs", "-c", "echo child-line >&2")...)
	require.Equal(t, exitOK, code, stderr)
	recs := jsonLines(t, stderr, "child-line")
	require.Contains(t, stderr, "child-line\n")
	acq := withLevel(withMsg(recs, "acquired"), "INFO") // the library logs its own at DEBUG
	require.Len(t, acq, 1, stderr)
	for _, k := range []string{"path", "node", "token", "session"} {
		assert.Contains(t, acq[0], k, "acquired carries %s", k)
	}
	assert.Equal(t, "/locks/logs", acq[0]["path"])
	assert.Regexp(t, `^0x[0-9a-f]+$`, acq[0]["session"])
	require.NotEmpty(t, withMsg(recs, "released"), stderr)

	// zklock's own outcome: not acquired, logged with outcome and status.
	h, _, _ := holder(t, env, "logs")
	code, _, stderr = runZklock(t, env, append(jsonArgs, "--try", "lock", "logs", "true")...)
	require.Equal(t, exitNotAcquired, code, stderr)
	recs = jsonLines(t, stderr)
	last := recs[len(recs)-1]
	assert.Equal(t, "ERROR", last["level"])
	assert.Equal(t, "not-acquired", last["outcome"])
	assert.EqualValues(t, exitNotAcquired, last["exit_code"])
	require.NoError(t, h.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, exitOK, h.wait(t, 20*time.Second))

	// The default format stays one "zklock: " line each, level warn.
	code, _, stderr = runZklock(t, env, "--log-level", "bogus", "lock", "logs", "true")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `invalid --log-level "bogus"`)
}

func TestIntegration_ExitCodes(t *testing.T) {
	t.Parallel()
	_, conn, env := zkSetup(t)
	h, _, _ := holder(t, env, "codes")

	// --conflict-exit-code: the status of "not acquired", as flock -E.
	for _, args := range [][]string{
		{"--conflict-exit-code", "75", "--try", "lock", "codes", "true"},
		{"--timeout", "300ms", "lock", "codes", "--conflict-exit-code", "75", "true"},
	} {
		code, _, stderr := runZklock(t, env, args...)
		assert.Equal(t, 75, code, "%v: %s", args, stderr)
		assert.Contains(t, stderr, "outcome=not-acquired exit_code=75", args)
	}
	code, _, stderr := runZklock(t, append(env, "ZKLOCK_CONFLICT_EXIT_CODE=0"), "--try", "lock", "codes", "true")
	assert.Equal(t, 0, code, "a busy lock may be no failure (cron): %s", stderr)
	require.NoError(t, h.cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, exitOK, h.wait(t, 20*time.Second))

	// CMD's status passes through, even when it is one of zklock's: the
	// log says whose it is.
	code, _, stderr = runZklock(t, env, "lock", "codes", "-c", "exit 3")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "outcome=child exit_code=3")
	code, _, stderr = runZklock(t, env, "--conflict-exit-code", "75", "lock", "codes", "-c", "exit 3")
	assert.Equal(t, 3, code, stderr)
	assert.NotContains(t, stderr, "also zklock's status", "3 is no longer zklock's")

	// --lost-exit-code: the status when the lock is lost while held.
	for _, withCmd := range []bool{false, true} {
		args := []string{"--lost-exit-code", "76", "lock", "/codes/lost"}
		if withCmd {
			args = append(args, "-c", "echo $ZKLOCK_NODE; while :; do sleep 0.05; done")
		}
		p := startZklock(t, env, args...)
		node, _, _ := strings.Cut(p.firstLine(t), " ")
		require.NoError(t, conn.Delete(node, -1))
		assert.Equal(t, 76, p.wait(t, 20*time.Second), p.stderr.String())
		assert.Contains(t, p.stderr.String(), "outcome=lost exit_code=76")
	}

	for _, bad := range []string{"256", "-1", "x"} {
		code, _, stderr := runZklock(t, env, "--conflict-exit-code", bad, "lock", "codes", "true")
		assert.Equal(t, exitUsage, code, stderr)
		assert.Contains(t, stderr, "want an exit status, 0 to 255")
	}
}

// --id and --data on every holding verb are the node's data, which status
// and ls show in place of the host's address; -c runs a shell string.
func TestIntegration_IDAndDataShown(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	for _, tc := range []struct {
		verb []string
		flag string
	}{
		{[]string{"lock", "shown/lock"}, "--id"},
		{[]string{"read", "shown/rw"}, "--data"},
		{[]string{"write", "shown/rw2"}, "--id"},
		{[]string{"semaphore", "shown/sem", "--leases", "2"}, "--data"},
		{[]string{"elect", "shown/elect"}, "--data"},
	} {
		t.Run(tc.verb[0], func(t *testing.T) {
			id := "worker " + tc.verb[0] + " 7"
			p := startZklock(t, env, append(tc.verb, tc.flag, id)...)
			p.firstLine(t)
			code, stdout, stderr := runZklock(t, env, "status", tc.verb[1], "--json")
			require.Equal(t, exitOK, code, stderr)
			assert.Regexp(t, `"data":\s*"`+id+`"`, stdout)
			code, stdout, stderr = runZklock(t, env, "ls", "--json")
			require.Equal(t, exitOK, code, stderr)
			assert.Regexp(t, `"id":\s*"`+id+`"`, stdout)
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			require.Equal(t, exitOK, p.wait(t, 20*time.Second), p.stderr.String())
		})
	}
	code, stdout, stderr := runZklock(t, env, "lock", "shell", "-c", `echo "$ZKLOCK_PATH via $0"; exit 7`)
	assert.Equal(t, 7, code, stderr)
	assert.Equal(t, "/locks/shell via /bin/sh\n", stdout)
}

func TestCLIShellGlue(t *testing.T) {
	t.Parallel()
	env := []string{"ZKLOCK_SERVERS=" + deadAddr(t)}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"lokc", "p"}, `unknown verb "lokc" (did you mean "lock"?)`},
		{[]string{"semaphores", "p"}, `(did you mean "semaphore"?)`},
		{[]string{"help", "staus"}, `(did you mean "status"?)`},
		{[]string{"lock", "--requeue", "p"}, "--requeue is not a flag of lock (it is one of elect)"},
		{[]string{"lock", "p", "--requeue", "true"}, "--requeue is not a flag of lock (it is one of elect)"},
		{[]string{"--requeue", "lock", "p"}, "--requeue is not a flag of lock (it is one of elect)"},
		{[]string{"--tmeout", "1s", "lock", "p"}, "flag provided but not defined: -tmeout (did you mean --timeout?)"},
		{[]string{"lock", "p", "--tmeout", "1s"}, "flag provided but not defined: -tmeout (did you mean --timeout?)"},
		{[]string{"lock", "p", "-c", "true", "true"}, `-c and CMD "true": give one`},
		{[]string{"lock", "p", "--id", "a", "--data", "b"}, "--id and --data both set the node's data"},
		{[]string{"elect", "--observe", "p", "-c", "true"}, "elect --observe takes no"},
		{[]string{"lock", "p", "--http", "0.0.0.0:0"}, "--insecure-listen"},
		{[]string{"lock", "p", "--http", "nonsense"}, `invalid --http "nonsense"`},
	} {
		code, stdout, stderr := runZklock(t, env, tt.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tt.args, stderr)
		assert.Contains(t, stderr, tt.want, tt.args)
		assert.Empty(t, stdout)
	}
	// The old name of --observe still works, with a warning.
	code, _, stderr := runZklock(t, env, "--timeout", "300ms", "elect", "--listen", "p")
	assert.Equal(t, exitError, code, stderr)
	assert.Contains(t, stderr, "zklock: warning: elect --listen is deprecated: use elect --observe")
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		d    int
	}{{"lock", "lock", 0}, {"lokc", "lock", 1}, {"lck", "lock", 1}, {"elec", "elect", 1}, {"", "ls", 2}, {"abc", "xyz", 3}} {
		assert.Equal(t, tt.d, editDistance(tt.a, tt.b), "%q %q", tt.a, tt.b)
	}
	assert.Empty(t, suggest("xyzzy", []string{"lock", "ls"}, strconvQuote))
	assert.Empty(t, suggest(strings.Repeat("a", 1<<16), []string{"lock"}, strconvQuote), "bounded")
}

func strconvQuote(s string) string { return `"` + s + `"` }

// get fetches http://addr/path with Host host ("" for addr) and returns
// the status and body.
func get(t *testing.T, addr, path, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// metricLine is one sample line of Prometheus' text format.
var metricLine = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? [-+]?([0-9.]+([eE][-+]?[0-9]+)?|NaN|Inf)$`)

// metrics parses a /metrics body: every line a comment (# HELP, # TYPE)
// or a sample; it returns the samples by name{labels}.
func metrics(t *testing.T, body string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		if strings.HasPrefix(l, "# HELP ") || strings.HasPrefix(l, "# TYPE ") {
			continue
		}
		require.Regexp(t, metricLine, l)
		i := strings.LastIndexByte(l, ' ')
		out[l[:i]] = l[i+1:]
	}
	return out
}

func TestIntegration_HTTPEndpoints(t *testing.T) {
	t.Parallel()
	zk, _, env := zkSetup(t)
	zk.RequireFaults(t)
	addrA, addrB := deadAddr(t), deadAddr(t)
	a := startZklock(t, env, "elect", "ep", "--id", "a", "--http", addrA)
	a.firstLine(t)
	// The standby rides out suspensions of up to 2s, then is unhealthy.
	b := startZklock(t, env, "-v", "--loss-limit", "2s", "elect", "ep", "--id", "b", "--http", addrB)
	b.waitStderr(t, "zklock: serving")
	code, body := get(t, addrB, "/healthz", "")
	require.Equal(t, http.StatusOK, code, body)

	code, body = get(t, addrA, "/leader", "")
	assert.Equal(t, http.StatusOK, code, body)
	code, body = get(t, addrB, "/leader", "")
	assert.Equal(t, http.StatusServiceUnavailable, code, body)
	code, _ = get(t, addrA, "/healthz", "")
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(t, addrA, "/leader", "evil.example:80")
	assert.Equal(t, http.StatusForbidden, code, "a Host it does not serve (DNS rebinding)")
	code, _ = get(t, addrA, "/leader", "localhost:"+addrA[strings.LastIndexByte(addrA, ':')+1:])
	assert.Equal(t, http.StatusOK, code, "localhost on loopback")

	for addr, lead := range map[string]string{addrA: "1", addrB: "0"} {
		code, body := get(t, addr, "/metrics", "")
		require.Equal(t, http.StatusOK, code)
		m := metrics(t, body)
		if lead == "1" {
			assert.Equal(t, lead, m[`zklock_leader{path="/locks/ep",recipe="election"}`], body)
			assert.Equal(t, "1", m[`zklock_held{recipe="election"}`], body)
		} else {
			assert.NotContains(t, m, `zklock_leader{path="/locks/ep",recipe="election"}`, "never led")
			assert.Equal(t, "1", m[`zklock_waiting`], body)
		}
		assert.Equal(t, "1", m[`zklock_sessions{state="connected"}`], body)
		assert.Equal(t, "1", m[`zklock_session_state_changes_total{state="connected"}`], body)
	}

	// The server stops: healthz says so once the loss limit has passed
	// (answered from the session's state, with no server to ask).
	require.NoError(t, zk.Stop(0))
	start := time.Now()
	require.Eventually(t, func() bool {
		code, _ := get(t, addrB, "/healthz", "")
		return code == http.StatusServiceUnavailable
	}, 20*time.Second, 20*time.Millisecond, b.stderr.String())
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "suspended within the loss limit is healthy")
	code, body = get(t, addrB, "/metrics", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "1", metrics(t, body)[`zklock_sessions{state="suspended"}`], body)
	assert.Equal(t, exitLost, a.wait(t, 20*time.Second), "the leader, limit 0, lost at the suspension: %s", a.stderr.String())

	// SIGTERM stops the server with the process.
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	b.wait(t, 20*time.Second)
	_, err := http.Get("http://" + addrB + "/healthz")
	assert.Error(t, err)
}

func TestIntegration_RequeueBacksOffOnOneSession(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	p := startZklock(t, env, "--log-format", "json", "-v", "elect", "crash", "--requeue", "-c", "exit 1")
	const window = 10 * time.Second
	select {
	case <-p.done:
		t.Fatalf("zklock stopped: %s", p.stderr)
	case <-time.After(window):
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Contains(t, []int{1, exitNotAcquired, 128 + int(syscall.SIGTERM)}, p.wait(t, 20*time.Second), p.stderr.String())
	recs := jsonLines(t, p.stderr.String())
	terms := withLevel(withMsg(recs, "acquired"), "INFO")
	sessions := map[any]bool{}
	for _, r := range terms {
		sessions[r["session"]] = true
	}
	// At the soonest the campaigns start 0, 0.25, 0.75, 1.75, 3.75 and
	// 7.75s after the first: at most 6 in 10s (the first included).
	assert.LessOrEqual(t, len(terms), 6, "terms in %v:\n%s", window, p.stderr)
	assert.GreaterOrEqual(t, len(terms), 3, "terms in %v:\n%s", window, p.stderr)
	assert.Len(t, sessions, 1, "every term on one session:\n%s", p.stderr)
}
