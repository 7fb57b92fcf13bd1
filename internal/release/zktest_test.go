package release

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// readmeTest returns the README's copy-paste test for a user's module: the
// Go block that is a whole file of package orders_test.
func readmeTest(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(repo, "README.md"))
	require.NoError(t, err)
	defer f.Close()
	var b strings.Builder
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == "```go":
			in = true
			b.Reset()
		case in && line == "```":
			if strings.HasPrefix(b.String(), "package orders_test\n") {
				return b.String()
			}
			in = false
		case in:
			b.WriteString(line + "\n")
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("README.md has no ```go block that starts with package orders_test")
	return ""
}

// releaseHome lays out an Apache binary release's lib/ in a fresh directory
// from zklock's cached Debian 3.9 jars (their manifests name the system's
// dependency jars) and the system's slf4j jars.
func releaseHome(t *testing.T) string {
	t.Helper()
	cache := os.Getenv("ZKLOCK_CACHE")
	if cache == "" {
		cache = "/var/cache/zklock"
	}
	dir := filepath.Join(cache, "zookeeper-3.9", "usr", "share", "java")
	jars, err := filepath.Glob(filepath.Join(dir, "zookeeper-*3.9.*.jar"))
	require.NoError(t, err)
	require.NotEmpty(t, jars, "no ZooKeeper 3.9 jars in %s", dir)
	home := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(home, "lib"), 0o755))
	for _, j := range append(jars, "/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-simple.jar") {
		require.FileExists(t, j)
		require.NoError(t, os.Symlink(j, filepath.Join(home, "lib", filepath.Base(j))))
	}
	return home
}

// A user's module that requires zktest at the release version, fetched
// offline, runs the README's copy-paste test against a server found only
// through ZOOKEEPER_HOME (ZKTEST_SEARCH=home: neither zklock's cache nor
// Debian's /usr/share/java/zookeeper.jar is looked at); with no server
// there, the test fails with the error that says where zktest looked and
// how to install one.
func TestIntegration_ZktestInUserModule(t *testing.T) {
	version, env := offline(t)
	// The user's environment: none of the harness's settings of this run.
	var clean []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "ZKTEST_") && k != "ZOOKEEPER_HOME" && k != "ZK_SERVERS" && k != "ZKLOCK_CACHE" {
			clean = append(clean, kv)
		}
	}
	clean = append(clean, "ZKLOCK_CACHE="+filepath.Join(t.TempDir(), "none"), "ZKTEST_SEARCH=home,path")

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/orders\n\ngo 1.26\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orders_test.go"), []byte(readmeTest(t)), 0o644))
	goCmd(t, dir, clean, "get", Root+"@"+version)
	goCmd(t, dir, clean, "mod", "tidy")

	home := releaseHome(t)
	out := goCmd(t, dir, append(clean, "ZOOKEEPER_HOME="+home), "test", "-count=1", "-v", "-run", "^TestIntegration_OrdersLock$", ".")
	require.Contains(t, out, "--- PASS: TestIntegration_OrdersLock")
	require.Contains(t, out, " from ZOOKEEPER_HOME="+home+", local backend")
	require.Regexp(t, `zktest: ZooKeeper 3\.9\.\d+ from`, out)

	// Nothing there: PATH has java (and go) but no zkServer.sh.
	bin := t.TempDir()
	for _, name := range []string{"java", "go"} {
		p, err := exec.LookPath(name)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, name)))
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestIntegration_OrdersLock$", ".")
	cmd.Dir, cmd.Env = dir, append(clean, "ZOOKEEPER_HOME=", "PATH="+bin)
	b, err := cmd.CombinedOutput()
	require.Error(t, err, "%s", b)
	for _, want := range []string{
		"--- FAIL: TestIntegration_OrdersLock",
		"zktest: no ZooKeeper server to run: looked for a ZooKeeper server in:\n",
		"  ZOOKEEPER_HOME: not set\n",
		"  zkServer.sh on PATH: neither zkServer.sh nor zkServer is on PATH\n",
		"  (not searched, as ZKTEST_SEARCH says: cache, debian)\n",
		"  Debian, Ubuntu:  sudo apt install zookeeper\n",
		"  macOS:           brew install zookeeper\n",
		"set ZOOKEEPER_HOME to its directory",
		"run the servers in containers with github.com/zklock/zklock/zktest/containers",
	} {
		require.Contains(t, string(b), want)
	}
	require.NotContains(t, string(b), "make ")
}
