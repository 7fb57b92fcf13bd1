package peers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/debcache"
)

// A Generation is one pair of peer releases the interop tests run against:
// Bookworm (Debian bookworm's Curator 5.4.0 and kazoo 2.8.0, on bookworm's
// ZooKeeper 3.8 client) or Newest (Debian's newest Curator 5 on the
// ZooKeeper 3.9 client, and kazoo 2, unpacked by scripts/fetch-newer.sh).
type Generation struct {
	CuratorVersion string // "5.4.0"
	KazooVersion   string // "2.8.0"

	jars       []string // the Curator peer's class path, dependencies first
	pythonPath string   // kazoo's directory, "" for the system's
	missing    error    // why this generation cannot run, nil if it can
	compiled   sync.Map // class name and source digest -> *compiled
	script     func() (string, error)
}

type compiled struct {
	once sync.Once
	dir  string
	err  error
}

// Name is "curator-<version>/kazoo-<version>", for subtest names.
func (g *Generation) Name() string { return "curator-" + g.CuratorVersion + "/kazoo-" + g.KazooVersion }

// bookwormJars are bookworm's Curator and ZooKeeper client jars; their
// manifests pull in the rest (netty, jackson, ...).
var bookwormJars = []string{
	"curator-recipes.jar", "curator-framework.jar", "curator-client.jar",
	"zookeeper.jar", "zookeeper-jute.jar", "guava.jar", "slf4j-api.jar", "slf4j-nop.jar",
}

// Bookworm is Debian bookworm's Curator 5.4.0 and kazoo 2.8.0.
var Bookworm = sync.OnceValue(func() *Generation {
	g := &Generation{CuratorVersion: "5.4.0", KazooVersion: "2.8.0"}
	for _, j := range bookwormJars {
		g.jars = append(g.jars, filepath.Join(JarDir, j))
	}
	g.missing = missingJars(g.jars)
	g.script = sync.OnceValues(func() (string, error) { return kazooScript(g.pythonPath) })
	return g
})

// Newest is the newest Curator 5 and kazoo 2 in Debian, from the cache
// that scripts/fetch-newer.sh fills (internal/debcache). Each Debian jar's
// manifest names bookworm's jars and is searched right after that jar, so
// the class path lists dependencies first: the ZooKeeper 3.9 client (jute
// before the client jar), then Curator's client, framework and recipes.
var Newest = sync.OnceValue(func() *Generation {
	cache := debcache.Dir()
	zk := filepath.Join(cache, "zookeeper-3.9", "usr", "share", "java")
	cur := filepath.Join(cache, "curator-5", "usr", "share", "java")
	g := &Generation{
		CuratorVersion: upstream(filepath.Join(cache, "curator-5", "version")),
		KazooVersion:   upstream(filepath.Join(cache, "kazoo-2", "version")),
		pythonPath:     filepath.Join(cache, "kazoo-2", "usr", "lib", "python3", "dist-packages"),
		jars: []string{
			filepath.Join(zk, "zookeeper-jute.jar"), filepath.Join(zk, "zookeeper.jar"),
			filepath.Join(cur, "curator-client.jar"), filepath.Join(cur, "curator-framework.jar"), filepath.Join(cur, "curator-recipes.jar"),
			filepath.Join(JarDir, "guava.jar"), filepath.Join(JarDir, "slf4j-api.jar"), filepath.Join(JarDir, "slf4j-nop.jar"),
		},
	}
	g.missing = missingJars(g.jars)
	if g.missing == nil {
		if _, err := os.Stat(filepath.Join(g.pythonPath, "kazoo")); err != nil {
			g.missing = err
		}
	}
	g.script = sync.OnceValues(func() (string, error) { return kazooScript(g.pythonPath) })
	return g
})

// Generations returns every generation the interop tests run against,
// oldest first.
func Generations() []*Generation { return []*Generation{Bookworm(), Newest()} }

// Each runs f as a subtest for every generation.
func Each(t *testing.T, f func(t *testing.T, g *Generation)) {
	t.Helper()
	for _, g := range Generations() {
		t.Run(g.Name(), func(t *testing.T) { f(t, g) })
	}
}

// upstream reads a Debian version file ("5.7.1+ds-1") and returns the
// upstream release ("5.7.1"), or "missing".
func upstream(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "missing"
	}
	v := strings.TrimSpace(string(b))
	if i := strings.IndexAny(v, "+-~"); i > 0 {
		v = v[:i]
	}
	return v
}

func missingJars(jars []string) error {
	for _, j := range jars {
		if _, err := os.Stat(j); err != nil {
			return fmt.Errorf("missing jar (run `make deps`): %w", err)
		}
	}
	return nil
}

// ClassPath is the class path the generation's Java peers and benchmark
// drivers run with.
func (g *Generation) ClassPath() string { return strings.Join(g.jars, string(os.PathListSeparator)) }

// CompileJava compiles the Java source of class (one file) against the
// generation's class path, once per content and class path: the classes
// are cached under os.TempDir by a digest of both. It returns the class
// directory. Concurrent callers in other processes may race; any complete
// result wins.
func (g *Generation) CompileJava(class string, source []byte) (string, error) {
	v, _ := g.compiled.LoadOrStore(class+"\x00"+Digest(source), &compiled{})
	c := v.(*compiled)
	c.once.Do(func() {
		if g.missing != nil {
			c.err = g.missing
			return
		}
		c.dir, c.err = compileJava(class, source, g.ClassPath())
	})
	return c.dir, c.err
}

// Curator starts a Curator peer of this generation connected to connect.
// The peer source is compiled once per test binary and generation (cached
// under os.TempDir). It fails the test, naming `make deps`, if Java or the
// jars are missing.
func (g *Generation) Curator(t testing.TB, connect string, sessionTimeout time.Duration) *Peer {
	t.Helper()
	return g.startCurator(t, connect, sessionTimeout, nil, nil)
}

// CuratorNamespace starts a Curator peer whose client is built with
// CuratorFrameworkFactory.Builder.namespace(ns): the paths in its commands
// and events are then relative to /ns, as Curator's are.
func (g *Generation) CuratorNamespace(t testing.TB, connect string, sessionTimeout time.Duration, ns string) *Peer {
	t.Helper()
	return g.startCurator(t, connect, sessionTimeout, nil, nil, ns)
}

// Kazoo starts a kazoo peer (Python) of this generation connected to
// connect. It fails the test, naming `make deps`, if /usr/bin/python3
// cannot import that kazoo.
func (g *Generation) Kazoo(t testing.TB, connect string, sessionTimeout time.Duration) *Peer {
	t.Helper()
	if g.missing != nil {
		t.Fatalf("peers: kazoo %s: %v\n(install the interop test dependencies with `make deps`)", g.KazooVersion, g.missing)
	}
	script, err := g.script()
	if err != nil {
		t.Fatalf("peers: cannot prepare the kazoo %s peer: %v\n(install the interop test dependencies with `make deps`)", g.KazooVersion, err)
	}
	return start(t, "kazoo "+g.KazooVersion, g.Env(), Python, "-u", script, connect, fmt.Sprint(sessionTimeout.Milliseconds()))
}

// Env is the environment of a Python process that imports the
// generation's kazoo (the benchmark's driver, its peers): nil, this
// process's own, when that is the system's kazoo. It does not check that
// the import works; Kazoo does.
func (g *Generation) Env() []string {
	if g.pythonPath == "" {
		return nil
	}
	return append(os.Environ(), "PYTHONPATH="+g.pythonPath)
}

// kazooImport checks that python3 imports kazoo from pythonPath (the
// system's when empty) and that it is that kazoo.
func kazooImport(pythonPath string) error {
	cmd := exec.Command(Python, "-c", "import kazoo, kazoo.recipe.lock; print(kazoo.__file__)")
	if pythonPath != "" {
		cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s cannot import kazoo: %w\n%s", Python, err, out)
	}
	if pythonPath != "" && !strings.HasPrefix(strings.TrimSpace(string(out)), pythonPath) {
		return fmt.Errorf("%s imported kazoo from %s, not from %s", Python, strings.TrimSpace(string(out)), pythonPath)
	}
	return nil
}
