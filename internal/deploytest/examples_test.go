package deploytest

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var examplesDir = filepath.Join(repoRoot, "examples", "deploy")

// acceptedArgs checks that the release binary accepts args as a command
// line (exit status other than 2, usage), with the servers replaced by a
// closed loopback port so that nothing leaves the machine.
func acceptedArgs(t *testing.T, args []string) {
	t.Helper()
	bin := filepath.Join(distDir, "zklock-"+runtime.GOOS+"-"+runtime.GOARCH)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no release binary for %s/%s (make dist) to parse the command line with", runtime.GOOS, runtime.GOARCH)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--servers", "127.0.0.1:1", "--timeout", "100ms"}, args...)...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.True(t, err == nil || errors.As(err, &ee), "%v: %s", err, out)
	require.NotEqual(t, 2, cmd.ProcessState.ExitCode(), "zklock %v: a usage error: %s", args, out)
}

// unitKeys reads a systemd unit's Key=Value lines (the last of a key wins).
func unitKeys(t *testing.T, path string) map[string]string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	keys := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			keys[k] = v
		}
	}
	require.NoError(t, sc.Err())
	return keys
}

// The systemd unit stops zklock with SIGTERM, restarts it on failure, and
// runs a zklock elect command line zklock accepts, endpoints on loopback.
func TestDeployExampleSystemd(t *testing.T) {
	keys := unitKeys(t, filepath.Join(examplesDir, "zklock-jobs.service"))
	for k, want := range map[string]string{"KillSignal": "SIGTERM", "Restart": "on-failure", "KillMode": "mixed"} {
		assert.Equal(t, want, keys[k], k)
	}
	for _, k := range []string{"RestartSec", "TimeoutStopSec"} {
		assert.NotEmpty(t, keys[k], k)
	}
	cmdline := strings.Fields(keys["ExecStart"])
	require.GreaterOrEqual(t, len(cmdline), 3)
	require.Equal(t, "zklock", filepath.Base(cmdline[0]))
	require.Equal(t, "elect", cmdline[1])
	require.Regexp(t, `--http 127\.0\.0\.1:\d+ `, keys["ExecStart"], "endpoints on loopback")
	args := strings.ReplaceAll(strings.Join(cmdline[1:], " "), "%H", "host")
	acceptedArgs(t, strings.Fields(args))
}

// The Deployment runs 3 replicas with liveness on /healthz, readiness on
// /leader and a grace period, a Service selects its pods, and its args are
// a command line zklock accepts.
func TestDeployExampleKubernetes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(examplesDir, "kubernetes.yaml"))
	require.NoError(t, err)
	y := string(b)
	for _, re := range []string{
		`(?m)^kind: Deployment$`, `(?m)^  replicas: 3$`, `(?m)^      terminationGracePeriodSeconds: \d+$`,
		`(?s)livenessProbe:\s+httpGet: \{path: /healthz,`, `(?s)readinessProbe:\s+httpGet: \{path: /leader,`,
		`(?m)^kind: Service$`, `(?s)kind: Service.*selector: \{app: jobs\}`,
	} {
		assert.Regexp(t, re, y)
	}
	m := regexp.MustCompile(`(?s)\n          args:\n(.*?)\n          ports:`).FindStringSubmatch(y)
	require.NotNil(t, m, "the container's args")
	var args []string
	for _, line := range strings.Split(m[1], "\n") {
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			args = append(args, strings.ReplaceAll(a, "$(POD_NAME)", "jobs-0"))
		}
	}
	require.Equal(t, "elect", args[0])
	acceptedArgs(t, args)
}

// The Dockerfile: a non-root user, entrypoint zklock, a HEALTHCHECK on
// /healthz.
func TestDeployExampleDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(examplesDir, "Dockerfile"))
	require.NoError(t, err)
	d := string(b)
	assert.Regexp(t, `(?m)^USER zklock`, d)
	assert.Regexp(t, `(?m)^ENTRYPOINT \["zklock"\]$`, d)
	assert.Regexp(t, `(?m)^HEALTHCHECK .*\n.*/healthz`, d)
}
