package zktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/debcache"
)

// EnvVersion ("ZKTEST_ZK_VERSION") selects the ZooKeeper release the local
// backend runs: "3.9" (DefaultVersion, Debian's newest 3.9, from the cache
// that scripts/fetch-newer.sh fills) or "3.8" (Debian bookworm's zookeeper
// package, 3.8.0). Any other value fails Start with a message listing
// these. ZKTEST_CLASSPATH, when set, overrides both.
const EnvVersion = "ZKTEST_ZK_VERSION"

// DefaultVersion is the release Start runs when EnvVersion is unset.
const DefaultVersion = "3.9"

// EnvCache ("ZKLOCK_CACHE") is the directory that scripts/fetch-newer.sh
// unpacks the newer Debian releases into; default DefaultCache.
const EnvCache = debcache.Env

// DefaultCache is where scripts/fetch-newer.sh puts its releases unless
// ZKLOCK_CACHE says otherwise.
const DefaultCache = debcache.Default

// A release is one ZooKeeper server release the local backend can run.
type release struct {
	name string   // "3.9", "3.8"
	jars []string // class path, dependencies first (see classpathFor)
	hint string   // how to get it
}

// Versions lists the values EnvVersion accepts, the default first.
func Versions() []string { return []string{"3.9", "3.8"} }

// SelectedVersion returns the release EnvVersion selects ("3.9" when it is
// unset), or an error naming the accepted values.
func SelectedVersion() (string, error) { return checkVersion(os.Getenv(EnvVersion), EnvVersion) }

// checkVersion returns v if it is one of Versions, DefaultVersion if it is
// empty, or an error naming the accepted values and where v came from
// (EnvVersion, or "WithVersion").
func checkVersion(v, from string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return DefaultVersion, nil
	}
	for _, ok := range Versions() {
		if v == ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("zktest: %s=%q: want one of %s (unset means %s)", from, v, strings.Join(Versions(), ", "), DefaultVersion)
}

// CacheDir returns $ZKLOCK_CACHE or DefaultCache.
func CacheDir() string { return debcache.Dir() }

// releaseFor returns the jars of release v. Each Debian jar's manifest
// Class-Path names bookworm's 3.8 jars (zookeeper-jute.jar among them),
// and the JVM searches a jar's Class-Path right after that jar: so the 3.9
// jute jar comes before the 3.9 server jar, or 3.8's jute classes win.
func releaseFor(v string) release {
	switch v {
	case "3.8":
		return release{name: v, jars: []string{debianZooKeeperJar}, hint: "run `make deps` (scripts/install-deps.sh) to install Debian's zookeeper package"}
	default:
		dir := filepath.Join(CacheDir(), "zookeeper-3.9", "usr", "share", "java")
		return release{
			name: v,
			jars: []string{filepath.Join(dir, "zookeeper-jute.jar"), filepath.Join(dir, "zookeeper.jar")},
			hint: "run `make deps` (scripts/install-deps.sh runs scripts/fetch-newer.sh), or " + EnvVersion + "=3.8 for bookworm's 3.8.0",
		}
	}
}

// classpath returns the release's class path, or says what is missing.
func (r release) classpath() (string, error) {
	for _, j := range r.jars {
		if _, err := os.Stat(j); err != nil {
			return "", fmt.Errorf("zktest: ZooKeeper %s not found (%v); %s, or set %s", r.name, err, r.hint, envClasspath)
		}
	}
	return strings.Join(r.jars, string(os.PathListSeparator)), nil
}

// ServerVersion asks member i for its release with the srvr four-letter
// word and returns it as the server reports it ("3.9.6", "3.8.0"), without
// the build suffix.
func (c *Cluster) ServerVersion(i int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := c.fourLetter(ctx, i, "srvr")
	if err != nil {
		return "", err
	}
	return parseVersion(out)
}

// ExistsNeedsRead reports whether a server of the given version ("3.9.6")
// answers exists on a node without READ permission with NoAuth, as
// ZooKeeper does since 3.8.4 and 3.9.2 (ZOOKEEPER-2590); older servers
// answered it for anyone.
func ExistsNeedsRead(version string) bool {
	switch {
	case AtLeast(version, "3.9.2"):
		return true
	case AtLeast(version, "3.9.0"):
		return false
	default:
		return AtLeast(version, "3.8.4")
	}
}

// AtLeast reports whether the dotted release version is floor or later
// ("3.9.6" is at least "3.9.2"; "3.10.0" at least "3.9.9"). Parts that are
// not numbers count as 0.
func AtLeast(version, floor string) bool {
	a, b := strings.Split(version, "."), strings.Split(floor, ".")
	for i := range max(len(a), len(b)) {
		x, y := part(a, i), part(b, i)
		if x != y {
			return x > y
		}
	}
	return true
}

func part(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	n, err := strconv.Atoi(parts[i])
	if err != nil {
		return 0
	}
	return n
}

// logVersion logs the release the cluster runs, so that a failing test
// says which server it ran on.
func (c *Cluster) logVersion(t testing.TB) {
	t.Helper()
	v, err := c.ServerVersion(0)
	if err != nil {
		v = "of unknown version (" + err.Error() + ")"
	}
	t.Logf("zktest: ZooKeeper %s, %s backend, %d server(s) at %s", v, c.backend, len(c.servers), c.ConnectString())
}

// parseVersion reads "Zookeeper version: 3.9.6-<commit>, built on ..."
// from a srvr answer.
func parseVersion(srvr string) (string, error) {
	for line := range strings.SplitSeq(srvr, "\n") {
		rest, ok := strings.CutPrefix(line, "Zookeeper version: ")
		if !ok {
			continue
		}
		v, _, _ := strings.Cut(rest, ",")
		v, _, _ = strings.Cut(v, "-")
		if v = strings.TrimSpace(v); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("zktest: no version in the srvr answer %q", firstLine(srvr))
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 80 {
		l = l[:80] + "..."
	}
	return l
}
