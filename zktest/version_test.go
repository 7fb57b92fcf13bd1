package zktest

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelectedVersion(t *testing.T) {
	for _, tc := range []struct {
		env, want, err string
	}{
		{"", "3.9", ""},
		{"3.9", "3.9", ""},
		{"3.8", "3.8", ""},
		{" 3.8 ", "3.8", ""},
		{"3.7", "", `ZKTEST_ZK_VERSION="3.7": want one of 3.9, 3.8`},
		{"3.9.6", "", "want one of"},
		{"latest", "", "want one of"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(EnvVersion, tc.env)
			v, err := SelectedVersion()
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
		})
	}
}

func TestUnknownVersionFailsFindJava(t *testing.T) {
	t.Setenv(envClasspath, "")
	t.Setenv(EnvVersion, "4.0")
	_, err := findJava("", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want one of 3.9, 3.8")
}

// Unset, ZKTEST_ZK_VERSION asks for no release in particular: the local
// backend runs the first server it finds.
func TestWantedVersion(t *testing.T) {
	t.Setenv(EnvVersion, "")
	v, err := wantedVersion("")
	require.NoError(t, err)
	assert.Equal(t, "", v)
	t.Setenv(EnvVersion, "3.8")
	v, err = wantedVersion("")
	require.NoError(t, err)
	assert.Equal(t, "3.8", v)
	v, err = wantedVersion("3.9")
	require.NoError(t, err)
	assert.Equal(t, "3.9", v)
}

func TestParseVersion(t *testing.T) {
	v, err := parseVersion("Zookeeper version: 3.9.6-${mvngit.commit.id}, built on 2026-10-16 16:58 UTC\nMode: standalone\n")
	require.NoError(t, err)
	assert.Equal(t, "3.9.6", v)
	v, err = parseVersion("Zookeeper version: 3.8.0-debian, built on 2024-06-16\n")
	require.NoError(t, err)
	assert.Equal(t, "3.8.0", v)
	_, err = parseVersion("srvr is not executed because it is not in the whitelist.\n")
	assert.ErrorContains(t, err, "no version in the srvr answer")
}

// The server a test gets is the release ZKTEST_ZK_VERSION selects (3.9
// when unset), as the server itself reports it.
func TestIntegration_ServerVersion(t *testing.T) {
	if os.Getenv(envClasspath) != "" || os.Getenv(EnvServers) != "" {
		t.Skipf("zktest: %s or %s chooses the server, not %s", envClasspath, EnvServers, EnvVersion)
	}
	want, err := SelectedVersion()
	require.NoError(t, err)
	c := Start(t)
	got, err := c.ServerVersion(0)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(got, want+"."), "server reports %s, want %s.x", got, want)
	t.Logf("ZooKeeper %s", got)
}

func TestExistsNeedsRead(t *testing.T) {
	for v, want := range map[string]bool{
		"3.8.0": false, "3.8.3": false, "3.8.4": true, "3.8.6": true,
		"3.9.0": false, "3.9.1": false, "3.9.2": true, "3.9.6": true, "3.10.0": true,
	} {
		assert.Equal(t, want, ExistsNeedsRead(v), v)
	}
	assert.True(t, AtLeast("3.10.0", "3.9.9"))
	assert.False(t, AtLeast("3.9", "3.9.1"))
}

// WithVersion overrides EnvVersion for one cluster, and an unknown value
// names the option, not the variable.
func TestWithVersionOverridesEnv(t *testing.T) {
	t.Setenv(envClasspath, "")
	t.Setenv(EnvVersion, "4.0")
	_, err := findJava("3.8", "")
	if err != nil { // a machine without bookworm's server: at least not the variable's error
		assert.NotContains(t, err.Error(), "want one of")
	}
	_, err = findJava("3.7", "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `WithVersion="3.7": want one of 3.9, 3.8`)
}

// Two clusters of one test run the releases their options name.
func TestIntegration_WithVersion(t *testing.T) {
	for _, v := range Versions() {
		t.Run(v, func(t *testing.T) {
			c := Start(t, WithVersion(v))
			got, err := c.ServerVersion(0)
			require.NoError(t, err)
			if os.Getenv(envClasspath) == "" && c.Backend() == "local" {
				assert.True(t, strings.HasPrefix(got, v+"."), "WithVersion(%q) ran %s", v, got)
			}
		})
	}
}
