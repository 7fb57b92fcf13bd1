package deploytest

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// distDir is where make dist leaves the release files.
var distDir = filepath.Join(repoRoot, "dist")

// platforms are the release binaries make dist builds.
var platforms = []struct {
	os, arch string
	elf      elf.Machine
	macho    macho.Cpu
}{
	{"linux", "amd64", elf.EM_X86_64, 0},
	{"linux", "arm64", elf.EM_AARCH64, 0},
	{"darwin", "amd64", 0, macho.CpuAmd64},
	{"darwin", "arm64", 0, macho.CpuArm64},
}

// needDist fails the test unless make dist has run.
func needDist(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(distDir, "SHA256SUMS")); err != nil {
		t.Fatalf("no dist/SHA256SUMS (%v): run make dist first (make deploy-test does)", err)
	}
}

// make dist's files: every platform's binary, static, for its OS and
// architecture, listed in SHA256SUMS with its digest; the binary of this
// machine prints the stamped version and commit, not "(devel)".
func TestDist(t *testing.T) {
	needDist(t)
	sums := map[string]string{}
	f, err := os.Open(filepath.Join(distDir, "SHA256SUMS"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "SHA256SUMS line %q: want DIGEST  NAME", sc.Text())
		sums[name] = sum
	}
	require.NoError(t, sc.Err())

	for _, p := range platforms {
		name := "zklock-" + p.os + "-" + p.arch
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(distDir, name)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			require.NotZero(t, fi.Mode()&0o111, "executable")
			require.Equal(t, digest(t, path), sums[name], "SHA256SUMS lists %s with its digest", name)
			switch p.os {
			case "linux":
				ef, err := elf.Open(path)
				require.NoError(t, err)
				defer ef.Close()
				require.Equal(t, p.elf, ef.Machine)
				for _, prog := range ef.Progs {
					require.NotEqual(t, elf.PT_INTERP, prog.Type, "static: no program interpreter (CGO_ENABLED=0)")
				}
				require.Nil(t, ef.Section(".dynamic"), "static: no dynamic section")
			case "darwin":
				mf, err := macho.Open(path)
				require.NoError(t, err)
				defer mf.Close()
				require.Equal(t, p.macho, mf.Cpu)
				libs, err := mf.ImportedLibraries()
				require.NoError(t, err)
				for _, l := range libs {
					system := strings.HasPrefix(l, "/usr/lib/") || strings.HasPrefix(l, "/System/Library/")
					require.True(t, system, "only the system's libraries (no cgo): %s", l)
				}
			}
		})
	}
	for name, sum := range sums {
		assert.Equal(t, digest(t, filepath.Join(distDir, name)), sum, "SHA256SUMS: %s", name)
	}

	host := filepath.Join(distDir, "zklock-"+runtime.GOOS+"-"+runtime.GOARCH)
	if _, err := os.Stat(host); err != nil {
		t.Skipf("no release binary for %s/%s to run", runtime.GOOS, runtime.GOARCH)
	}
	out, err := exec.Command(host, "--version").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NotContains(t, string(out), "(devel)")
	want := os.Getenv("VERSION") // make dist VERSION=...
	if want == "" {
		d, err := exec.Command("git", "-C", repoRoot, "describe", "--tags", "--always").Output()
		require.NoError(t, err)
		want = strings.TrimSpace(string(d))
	}
	require.True(t, strings.HasPrefix(string(out), "zklock "+want), "--version %q: want the stamped version %s", out, want)
	if rev, err := exec.Command("git", "-C", repoRoot, "rev-parse", "HEAD").Output(); err == nil {
		require.Contains(t, string(out), strings.TrimSpace(string(rev))[:7], "--version names the commit")
	}
}

func digest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}
