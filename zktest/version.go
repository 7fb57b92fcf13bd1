package zktest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/debcache"
)

// EnvVersion ("ZKTEST_ZK_VERSION") selects the ZooKeeper release the local
// backend runs: "3.9" or "3.8". The local backend then runs the first
// server of that release it finds (see EnvSearch); unset, it runs the
// first server it finds, whatever its release. Any other value fails Start
// with a message listing these. ZKTEST_CLASSPATH, when set, overrides it.
// The containers backend runs ImageRepo tagged with it (DefaultVersion
// when unset).
const EnvVersion = "ZKTEST_ZK_VERSION"

// DefaultVersion is the release SelectedVersion reports when EnvVersion is
// unset: the one zklock's development cache holds and its images default
// to.
const DefaultVersion = "3.9"

// EnvCache ("ZKLOCK_CACHE") is the directory of zklock's development cache,
// where the local backend looks for Debian's newest ZooKeeper 3.9
// (zookeeper-3.9/usr/share/java); default DefaultCache.
const EnvCache = debcache.Env

// DefaultCache is zklock's development cache unless ZKLOCK_CACHE says
// otherwise.
const DefaultCache = debcache.Default

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

// wantedVersion returns the release a cluster must run: option's
// (WithVersion) if set, else EnvVersion's, else "" (any release).
func wantedVersion(option string) (string, error) {
	if option != "" {
		return checkVersion(option, "WithVersion")
	}
	if env := os.Getenv(EnvVersion); strings.TrimSpace(env) != "" {
		return checkVersion(env, EnvVersion)
	}
	return "", nil
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
	if c.origin != "" {
		v += " from " + c.origin
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
