//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// authFile writes content to a new file of the given mode and returns its path.
func authFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "zk.auth")
	require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
	require.NoError(t, os.Chmod(f, mode))
	return f
}

// Credentials reach the server but never CMD's environment, stdout or
// stderr, from --auth-file or ZKLOCK_AUTH; ZKLOCK_AUTH used to be passed on
// to CMD.
func TestIntegration_CredentialsStayWithZklock(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	const secret = "s3cret-pw"
	file := authFile(t, "digest:alice:"+secret+"\n", 0o600)
	for name, tc := range map[string]struct {
		env  []string
		args []string
	}{
		"auth-file":        {nil, []string{"--auth-file", file}},
		"ZKLOCK_AUTH_FILE": {[]string{"ZKLOCK_AUTH_FILE=" + file}, nil},
		"ZKLOCK_AUTH":      {[]string{"ZKLOCK_AUTH=digest:alice:" + secret}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{"-v"}, tc.args...), "lock", "cred-"+name, "env")
			code, stdout, stderr := runZklock(t, append(append([]string{}, env...), tc.env...), args...)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, "ZKLOCK_NODE=", "CMD ran with the lock")
			assert.NotContains(t, stdout, secret, "CMD's environment")
			assert.NotContains(t, stdout, "ZKLOCK_AUTH=")
			assert.NotContains(t, stderr, secret)
		})
	}
}

// --auth-file is checked as ssh checks a key, and no error shows what is
// in it, or in --auth.
func TestCLIAuthFileChecked(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-pw"
	env := []string{"ZKLOCK_SERVERS=" + deadAddr(t)}
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"group-readable", nil, []string{"--auth-file", authFile(t, "digest:a:"+secret, 0o640)}, "permissions 0640 for "},
		{"world-writable", nil, []string{"--auth-file", authFile(t, "digest:a:"+secret, 0o602)}, "too open"},
		{"missing", nil, []string{"--auth-file", filepath.Join(t.TempDir(), "none")}, "no such file"},
		{"directory", nil, []string{"--auth-file", t.TempDir()}, "not a regular file (a directory)"},
		{"fifo", nil, []string{"--auth-file", fifo(t)}, "not a regular file (a FIFO)"},
		{"two lines", nil, []string{"--auth-file", authFile(t, "digest:a:"+secret+"\ndigest:b:"+secret, 0o600)}, "more than one line"},
		{"no scheme", nil, []string{"--auth-file", authFile(t, secret, 0o600)}, "want SCHEME:CRED"},
		{"both", []string{"ZKLOCK_AUTH=digest:a:" + secret}, []string{"--auth-file", authFile(t, "digest:a:"+secret, 0o600)}, "not both"},
		{"bad --auth", nil, []string{"--auth", secret}, "invalid --auth: want SCHEME:CRED"},
	}
	if os.Getuid() == 0 {
		other := authFile(t, "digest:a:"+secret, 0o600)
		require.NoError(t, os.Chown(other, 65534, 65534))
		tests = append(tests, struct {
			name string
			env  []string
			args []string
			want string
		}{"another user's", nil, []string{"--auth-file", other}, "is owned by uid 65534, not by this user (uid 0) or root"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startZklock(t, append(append([]string{}, env...), tt.env...), append(tt.args, "lock", "p", "true")...)
			code := p.wait(t, 10*time.Second)
			assert.Equal(t, exitUsage, code, p.stderr.String())
			assert.Contains(t, p.stderr.String(), tt.want)
			assert.NotContains(t, p.stderr.String(), secret)
		})
	}
}

// Credentials ZooKeeper refuses (a scheme it has no provider for) end
// the command at once with exit 1 and "not authorized", never run CMD
// (--on-unreachable run or not), and do not show the credentials.
func TestIntegration_CredentialsRefused(t *testing.T) {
	t.Parallel()
	_, _, env := zkSetup(t)
	marker := filepath.Join(t.TempDir(), "ran")
	start := time.Now()
	code, _, stderr := runZklock(t, env, "--timeout", "20s", "--on-unreachable", "run", "--auth", "kerberos:s3cret-pw",
		"lock", "refused-auth", "sh", "-c", `touch "$0"`, marker)
	t.Logf("exit %d after %v: %s", code, time.Since(start), stderr)
	assert.Equal(t, exitError, code, stderr)
	assert.Contains(t, stderr, "not authorized")
	assert.NotContains(t, stderr, "s3cret-pw")
	assert.NoFileExists(t, marker, "CMD ran")
	assert.Less(t, time.Since(start), 10*time.Second)
}

// fifo makes a named pipe that no one writes: opening it for reading
// blocks, unless without blocking.
func fifo(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(name, 0o600))
	return name
}
