package main

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersion checks what --version prints: a release build's stamped
// version and commit (make dist's -ldflags -X), and otherwise the module
// version and VCS revision the Go toolchain recorded.
func TestVersion(t *testing.T) {
	t.Run("stamped build", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "zklock")
		ld := "-X main.buildVersion=v9.8.7-test -X main.buildCommit=0123456789abcdef0123456789abcdef01234567"
		out, err := exec.Command("go", "build", "-ldflags", ld, "-o", bin, ".").CombinedOutput()
		require.NoError(t, err, "%s", out)
		out, err = exec.Command(bin, "--version").CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Regexp(t, `^zklock v9\.8\.7-test 0123456789ab go\S+\n$`, string(out))
	})
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "76244bbc86262f0e2a1b2c3d4e5f60718293a4b5"}}
	for _, tc := range []struct {
		name, stamped, commit string
		info                  *debug.BuildInfo
		want                  string
	}{
		{"stamped", "v0.3.0", "76244bbc86262f0e2a1b", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: rev}, "v0.3.0 76244bbc8626 go1.26.8"},
		{"stamped describe", "v0.3.0-2-g76244bbc8626", "76244bbc86262f0e2a1b", &debug.BuildInfo{GoVersion: "go1.26.8"}, "v0.3.0-2-g76244bbc8626 go1.26.8"},
		{"stamped without commit", "v0.3.0", "", &debug.BuildInfo{GoVersion: "go1.26.8"}, "v0.3.0 go1.26.8"},
		{"checkout", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: rev}, "(devel) 76244bbc8626 go1.26.8"},
		{"checkout, no version", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: rev}, "(devel) 76244bbc8626 go1.26.8"},
		{"go install @tag", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.0"}}, "v0.3.0 go1.26.8"},
		{"pseudo-version", "", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1-0.20260101000000-76244bbc8626"}, Settings: rev},
			"v0.3.1-0.20260101000000-76244bbc8626 go1.26.8"},
		{"no build information", "", "", nil, "(unknown: no build information)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, versionOf(tc.stamped, tc.commit, tc.info))
		})
	}
}
