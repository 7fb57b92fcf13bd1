package main

import (
	"bytes"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A verb's own flags may come before the verb, as the usage says; one that
// belongs to another verb is refused there.
func TestParseVerbFlagsBeforeVerb(t *testing.T) {
	inv, err := parseArgs([]string{"--leases", "3", "semaphore", "p", "true"}, envMap(nil))
	require.NoError(t, err)
	assert.Equal(t, 3, inv.opts.leases)
	assert.Equal(t, []string{"true"}, inv.cmd)

	inv, err = parseArgs([]string{"--id", "a", "--requeue", "--revocable", "elect", "p"}, envMap(nil))
	require.NoError(t, err)
	assert.Equal(t, "a", inv.opts.id)
	assert.True(t, inv.opts.requeue)
	assert.True(t, inv.opts.revocable)

	// After the verb (and after PATH) still wins over before it.
	inv, err = parseArgs([]string{"--leases", "3", "semaphore", "--leases", "4", "p", "--leases", "5"}, envMap(nil))
	require.NoError(t, err)
	assert.Equal(t, 5, inv.opts.leases)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--json", "lock", "p"}, "--json is not a flag of lock"},
		{[]string{"--leases", "2", "elect", "p"}, "--leases is not a flag of elect"},
		{[]string{"--revocable", "status", "p"}, "--revocable is not a flag of status"},
		{[]string{"--leases", "many", "semaphore", "p"}, "--leases"},
		{[]string{"lock", "--json", "p"}, "-json"},
	} {
		_, err := parseArgs(tc.args, envMap(nil))
		assertUsage(t, err, tc.want)
	}
}

func TestParseVerbHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"lock", "-h"}, {"lock", "p", "--help"}, {"--try", "lock", "-h"}, {"help", "lock"}} {
		_, err := parseArgs(args, envMap(nil))
		var vh *verbHelp
		require.ErrorAs(t, err, &vh, args)
		assert.Equal(t, "lock", vh.verb.name)
	}
	for _, args := range [][]string{{"-h"}, {"help"}} {
		_, err := parseArgs(args, envMap(nil))
		assert.ErrorIs(t, err, errHelp, args)
		var vh *verbHelp
		assert.False(t, errors.As(err, &vh), args)
	}
	for _, args := range [][]string{{"--version"}, {"--version", "lock"}, {"lock", "--version"}, {"-version", "bogus-verb"}} {
		_, err := parseArgs(args, envMap(nil))
		assert.ErrorIs(t, err, errVersion, args)
	}
}

// Every verb's -h shows its synopsis, its own flags, an example and the
// global flags, on stdout, with exit 0.
func TestCLIVerbHelp(t *testing.T) {
	t.Parallel()
	for _, v := range verbs {
		for _, args := range [][]string{{v.name, "-h"}, {"help", v.name}} {
			code, stdout, stderr := runZklock(t, nil, args...)
			assert.Equal(t, exitOK, code, stderr)
			assert.Empty(t, stderr)
			assert.Contains(t, stdout, "zklock [flags] "+v.name+" "+v.args, args)
			assert.Contains(t, stdout, "Example:\n  zklock ", args)
			assert.Contains(t, stdout, "--servers LIST", "global flags listed")
			for _, f := range verbFlags(v) {
				name := "--" + f.Name
				if len(f.Name) == 1 {
					name = "-" + f.Name // -c, as flock's
				}
				assert.Contains(t, stdout, "  "+name, "%v: own flag %s", args, name)
			}
			if v.holds {
				assert.Contains(t, stdout, "--loss-limit", args)
			}
		}
	}
	_, stdout, _ := runZklock(t, nil, "lock", "-h")
	assert.Contains(t, stdout, "Flags of lock:\n  --acl ACL")
	assert.Contains(t, stdout, "\n  --revocable")
	assert.Contains(t, stdout, "zklock lock nightly-backup -- ./backup.sh")
	_, stdout, _ = runZklock(t, nil, "semaphore", "-h")
	assert.Contains(t, stdout, "--leases N")
	_, stdout, _ = runZklock(t, nil, "elect", "-h")
	assert.Contains(t, stdout, "--loss-limit defaults to 0 here")
	assert.Contains(t, stdout, "  zklock [flags] elect --observe PATH [--json]\n", "the second synopsis")
	assert.Contains(t, stdout, "Curator LeaderLatch")
	assert.Contains(t, stdout, `"leader NODE TOKEN ID"`)
	assert.Contains(t, stdout, "zklock elect --observe jobs --json")
	assert.Contains(t, stdout, "deprecated name of --observe")
	_, stdout, _ = runZklock(t, nil, "status", "-h")
	assert.Contains(t, stdout, "--namespace NS", "the global flags of every verb")
}

// --version prints the module version the build recorded, as `go version
// -m` reads it from the binary.
func TestCLIVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "version", "-m", zklockBin).Output()
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s+mod\s+github.com/zklock/zklock\s+(\S+)`).FindSubmatch(out)
	require.NotNil(t, m, "no mod line in:\n%s", out)
	for _, args := range [][]string{{"--version"}, {"lock", "--version"}} {
		code, stdout, stderr := runZklock(t, nil, args...)
		assert.Equal(t, exitOK, code, stderr)
		require.True(t, strings.HasPrefix(stdout, "zklock "+string(m[1])), "%v: %q, want the version %s", args, stdout, m[1])
		assert.True(t, bytes.Contains(out, []byte(strings.Fields(stdout)[len(strings.Fields(stdout))-1])), "go version in %q", stdout)
	}
}

func TestUsageListsNewFlags(t *testing.T) {
	var b bytes.Buffer
	writeUsage(&b)
	for _, s := range []string{"--loss-limit DUR", "ZKLOCK_LOSS_LIMIT", "--tls-ca FILE", "--tls-cert FILE", "--tls-key FILE",
		"ZKLOCK_TLS_CA", "ZKLOCK_TLS_CERT", "ZKLOCK_TLS_KEY", "--version", "zklock VERB -h", "Default: elect 0",
		"--namespace NS", "ZKLOCK_NAMESPACE         --namespace", "ZKLOCK_NAMESPACE       the namespace",
		"elect --observe PATH [--json]", "[--latch]", "--latch ", "--observe ", "elect --observe: ended by",
		"--log-format text|json", "--log-level LEVEL", "ZKLOCK_LOG_FORMAT", "--conflict-exit-code N", "--lost-exit-code N",
		"ZKLOCK_CONFLICT_EXIT_CODE", "outcome=not-acquired", "outcome=child", "-c STRING", "--id ID, --data TEXT",
		"--http ADDR", "GET /healthz", "GET /leader", "zklock_leader{path"} {
		assert.Contains(t, b.String(), s)
	}
}

// The command line's defects of issue 29, as a user meets them: each is a
// usage error (exit 2) that says what is wrong, before anything connects,
// and CMD does not run.
func TestCLIRefusesBadInput(t *testing.T) {
	t.Parallel()
	ran := t.TempDir() + "/ran"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "bogus"}, `zklock: help: unknown verb "bogus" (verbs: lock, `},
		{[]string{"--servers", "127.0.0.1:99999", "lock", "p", "touch", ran},
			`zklock: invalid --servers "127.0.0.1:99999": "127.0.0.1:99999": port "99999" is not a number from 1 to 65535`},
		{[]string{"lock", "a//b", "touch", ran}, `zklock: invalid PATH "a//b" (znode "/locks/a//b"): empty element (//)`},
	} {
		code, stdout, stderr := runZklock(t, nil, tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, stdout, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
		assert.Contains(t, stderr, "Run 'zklock -h' for usage.", tc.args)
	}
	code, _, stderr := runZklock(t, []string{"ZKLOCK_SERVERS=zk1:2181,zk2:65536"}, "lock", "p", "touch", ran)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, `invalid ZKLOCK_SERVERS "zk1:2181,zk2:65536": "zk2:65536": port "65536"`)
	assert.NoFileExists(t, ran)
}
