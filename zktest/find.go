package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// EnvHome ("ZOOKEEPER_HOME") names a ZooKeeper installation, the first
// place the local backend looks: an unpacked Apache binary release
// (lib/*.jar; a 3.4 release's zookeeper-3.4.x.jar beside lib/), a Homebrew
// prefix (libexec/lib/*.jar), or a directory holding Debian's
// zookeeper.jar. WithServerHome names one for a single cluster.
const EnvHome = "ZOOKEEPER_HOME"

// EnvSearch ("ZKTEST_SEARCH") lists, comma-separated and in order, the
// places the local backend looks for a ZooKeeper server when neither
// ZKTEST_CLASSPATH nor WithServerHome names one (see Places). Unset, it is
// every place in Places' order; a CI job can name fewer, so that a stray
// installation cannot stand in for the one it meant ("home" alone: only
// ZOOKEEPER_HOME). An unknown name fails Start.
const EnvSearch = "ZKTEST_SEARCH"

// ErrNoServer is wrapped by the error of a Start that found no ZooKeeper
// server to run (or no java); the message lists each place looked at and
// why it did not fit, and how to install one.
var ErrNoServer = errors.New("zktest: no ZooKeeper server to run")

// Places returns the names EnvSearch accepts, in the default search order:
//
//	home    $ZOOKEEPER_HOME (see EnvHome)
//	cache   zklock's development cache, $ZKLOCK_CACHE/zookeeper-3.9 (see EnvCache)
//	path    zkServer.sh (or Homebrew's zkServer) on PATH, in a release's
//	        bin/ (tarball: the release is bin/..) or Homebrew's (the
//	        release is its libexec/), symbolic links followed
//	debian  Debian's and Ubuntu's packages (apt install zookeeper):
//	        /usr/share/java/zookeeper.jar, zookeeper-jute.jar before it
//	        when present, the dependencies its manifest names
func Places() []string { return []string{"home", "cache", "path", "debian"} }

// WithServerHome runs this cluster's servers from the ZooKeeper
// installation at dir (any layout EnvHome accepts) instead of searching;
// ZKTEST_CLASSPATH still overrides it. With WithVersion or EnvVersion the
// installation must be of that release.
func WithServerHome(dir string) Option { return func(c *config) { c.serverHome = dir } }

// install is one ZooKeeper server installation the local backend can run.
type install struct {
	where   string   // how it was found, for logs: "ZOOKEEPER_HOME=/opt/zk"
	version string   // "3.9.6"; "" if unknown
	jars    []string // the class path, jute jars first (see orderJars)
	debian  bool     // Debian's jars: slf4j-simple and the netty extras come from /usr/share/java
}

// look is one place searched and why it did not fit.
type look struct{ place, why string }

// debianJavaDir is where Debian and Ubuntu put their jars.
const debianJavaDir = "/usr/share/java"

// findServer returns the installation to run: the one at home if it is
// set (WithServerHome), else the first that fits want ("" for any
// release, else "3.9" or "3.8") among the places EnvSearch lists.
func findServer(home, want string) (install, error) {
	if home != "" {
		in, err := installAt(home, "WithServerHome("+home+")")
		if err == nil {
			err = in.fits(want)
		}
		if err != nil {
			return install{}, noServer(want, []look{{"WithServerHome(" + home + ")", err.Error()}}, nil)
		}
		return in, nil
	}
	places, err := searchPlaces()
	if err != nil {
		return install{}, err
	}
	var looked []look
	for _, p := range places {
		in, err := searchPlace(p)
		if err == nil {
			err = in.fits(want)
		}
		if err == nil {
			return in, nil
		}
		looked = append(looked, look{placeName(p), err.Error()})
	}
	var skipped []string
	for _, p := range Places() {
		if !slices.Contains(places, p) {
			skipped = append(skipped, p)
		}
	}
	return install{}, noServer(want, looked, skipped)
}

// searchPlaces parses EnvSearch.
func searchPlaces() ([]string, error) {
	v := strings.TrimSpace(os.Getenv(EnvSearch))
	if v == "" {
		return Places(), nil
	}
	var out []string
	for p := range strings.SplitSeq(v, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(Places(), p) {
			return nil, fmt.Errorf("zktest: %s=%q: %q is not one of %s", EnvSearch, v, p, strings.Join(Places(), ", "))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

func placeName(p string) string {
	switch p {
	case "home":
		return EnvHome
	case "cache":
		return "zklock's development cache " + filepath.Join(CacheDir(), "zookeeper-3.9") + " (" + EnvCache + ")"
	case "path":
		return "zkServer.sh on PATH"
	default:
		return "Debian/Ubuntu package, " + debianJavaDir + "/zookeeper.jar"
	}
}

// searchPlace looks in one of Places.
func searchPlace(p string) (install, error) {
	switch p {
	case "home":
		dir := os.Getenv(EnvHome)
		if dir == "" {
			return install{}, errors.New("not set")
		}
		return installAt(dir, EnvHome+"="+dir)
	case "cache":
		dir := filepath.Join(CacheDir(), "zookeeper-3.9", "usr", "share", "java")
		return debianAt(dir, "zklock's cache "+dir)
	case "path":
		return onPath()
	default:
		return debianAt(debianJavaDir, "Debian's package "+debianJavaDir)
	}
}

// installAt reads the installation at dir: a release, a Homebrew prefix,
// or a directory of Debian's jars.
func installAt(dir, where string) (install, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return install{}, err
	}
	if !st.IsDir() {
		return install{}, fmt.Errorf("%s is not a directory", dir)
	}
	if fileExists(filepath.Join(dir, "zookeeper.jar")) { // no release has it
		return debianAt(dir, where)
	}
	for _, d := range []string{dir, filepath.Join(dir, "libexec")} {
		if in, ok := releaseAt(d, where); ok {
			return in, nil
		}
	}
	return install{}, fmt.Errorf("no zookeeper-<version>.jar in %s/lib, %s or %s/libexec/lib, and no zookeeper.jar (want an unpacked apache-zookeeper-<version>-bin release)", dir, dir, dir)
}

var serverJar = regexp.MustCompile(`^zookeeper-(\d+\.\d+\.\d+)\.jar$`)

// releaseAt reads an Apache binary release unpacked at dir: every jar of
// dir/lib and of dir itself (a 3.4 release keeps its server jar there), one
// of them zookeeper-<version>.jar.
func releaseAt(dir, where string) (install, bool) {
	in := install{where: where}
	for _, d := range []string{filepath.Join(dir, "lib"), dir} {
		jars, _ := filepath.Glob(filepath.Join(d, "*.jar"))
		for _, j := range jars {
			if m := serverJar.FindStringSubmatch(filepath.Base(j)); m != nil && in.version == "" {
				in.version = m[1]
			}
		}
		in.jars = append(in.jars, jars...)
	}
	if in.version == "" {
		return install{}, false
	}
	in.jars = orderJars(in.jars)
	return in, true
}

// orderJars sorts jars by name with ZooKeeper's jute jars first: a
// Debian-built server jar's manifest names the system's jute jar, which
// the JVM searches right after the server jar.
func orderJars(jars []string) []string {
	slices.SortStableFunc(jars, func(a, b string) int {
		ja, jb := strings.HasPrefix(filepath.Base(a), "zookeeper-jute"), strings.HasPrefix(filepath.Base(b), "zookeeper-jute")
		switch {
		case ja && !jb:
			return -1
		case jb && !ja:
			return 1
		}
		return strings.Compare(filepath.Base(a), filepath.Base(b))
	})
	return jars
}

// debianAt reads Debian's layout in dir (/usr/share/java, or the cache's
// copy of a newer package): zookeeper.jar, whose manifest Class-Path names
// its dependencies by absolute path (the JVM skips those not installed),
// and zookeeper-jute.jar before it.
func debianAt(dir, where string) (install, error) {
	jar := filepath.Join(dir, "zookeeper.jar")
	if _, err := os.Stat(jar); err != nil {
		return install{}, err
	}
	in := install{where: where, jars: []string{jar}, debian: true}
	if jute := filepath.Join(dir, "zookeeper-jute.jar"); fileExists(jute) {
		in.jars = []string{jute, jar}
	}
	in.version = debianVersion(dir, jar)
	return in, nil
}

// debianVersion reads the release from the versioned name zookeeper.jar
// links to, or from its versioned sibling (zookeeper-3.8.0.jar).
func debianVersion(dir, jar string) string {
	if real, err := filepath.EvalSymlinks(jar); err == nil {
		if m := serverJar.FindStringSubmatch(filepath.Base(real)); m != nil {
			return m[1]
		}
	}
	found, _ := filepath.Glob(filepath.Join(dir, "zookeeper-[0-9]*.jar"))
	for _, f := range found {
		if m := serverJar.FindStringSubmatch(filepath.Base(f)); m != nil {
			return m[1]
		}
	}
	return ""
}

// onPath finds zkServer.sh (or Homebrew's zkServer wrapper) on PATH and
// the release it belongs to: bin/.. for a tarball, or ../libexec for
// Homebrew, looking both where PATH names it and where its links lead.
func onPath() (install, error) {
	var tried []string
	for _, name := range []string{"zkServer.sh", "zkServer"} {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		dirs := []string{filepath.Dir(filepath.Dir(p))}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(filepath.Dir(real)))
		}
		for _, d := range dirs {
			for _, home := range []string{d, filepath.Join(d, "libexec")} {
				if slices.Contains(tried, home) {
					continue
				}
				tried = append(tried, home)
				if in, ok := releaseAt(home, p+" ("+home+")"); ok {
					return in, nil
				}
			}
		}
	}
	if len(tried) == 0 {
		return install{}, errors.New("neither zkServer.sh nor zkServer is on PATH")
	}
	return install{}, fmt.Errorf("found a zkServer script, but no zookeeper-<version>.jar in lib/ of %s", strings.Join(tried, ", "))
}

// fits reports whether the installation is of release want ("" fits all).
func (in install) fits(want string) error {
	switch {
	case want == "" || strings.HasPrefix(in.version, want+"."):
		return nil
	case in.version == "":
		return fmt.Errorf("%s: release unknown, want %s", in.where, want)
	default:
		return fmt.Errorf("%s: ZooKeeper %s, want %s", in.where, in.version, want)
	}
}

// noServer is findServer's error: what it looked at, and how to install
// a server. It names no make target or script of this repository: its
// readers are the users of the package.
func noServer(want string, looked []look, skipped []string) error {
	var b strings.Builder
	for _, l := range looked {
		fmt.Fprintf(&b, "  %s: %s\n", l.place, l.why)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "  (not searched, as %s says: %s)\n", EnvSearch, strings.Join(skipped, ", "))
	}
	what := "a ZooKeeper server"
	if want != "" {
		what = "ZooKeeper " + want
	}
	return fmt.Errorf("%w: looked for %s in:\n%s%s", ErrNoServer, what, b.String(), installHelp)
}

// installHelp says how to get a ZooKeeper server that the search finds.
const installHelp = `Install one, then run the tests again:
  Debian, Ubuntu:  sudo apt install zookeeper
  macOS:           brew install zookeeper
  anywhere:        unpack an Apache ZooKeeper binary release (apache-zookeeper-<version>-bin.tar.gz,
                   https://zookeeper.apache.org/releases.html) and set ZOOKEEPER_HOME to its directory
  Docker only:     run the servers in containers with github.com/zklock/zklock/zktest/containers
                   (ZKTEST_IMAGE=zookeeper:3.9 runs the official image)
or set ZKTEST_CLASSPATH to a server's class path, or ZK_SERVERS to an ensemble that is running.`

// javaHelp says how to get java.
const javaHelp = `Install a Java runtime (11 or later), then run the tests again:
  Debian, Ubuntu:  sudo apt install default-jre-headless
  macOS:           brew install openjdk
  anywhere:        set JAVA_HOME to a JDK or JRE`

// brewJava lists where Homebrew keeps its openjdk, which it does not link
// onto PATH.
var brewJava = []string{
	"/opt/homebrew/opt/openjdk/bin/java",
	"/usr/local/opt/openjdk/bin/java",
	"/home/linuxbrew/.linuxbrew/opt/openjdk/bin/java",
}

// lookJava finds java: $JAVA_HOME/bin/java, java on PATH, or Homebrew's.
func lookJava() (string, error) {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		p, err := exec.LookPath(filepath.Join(home, "bin", "java"))
		if err != nil {
			return "", fmt.Errorf("%w: JAVA_HOME=%s has no bin/java (%v)\n%s", ErrNoServer, home, err, javaHelp)
		}
		return p, nil
	}
	if p, err := exec.LookPath("java"); err == nil {
		return p, nil
	}
	for _, p := range brewJava {
		if fileExists(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: java is not on PATH, JAVA_HOME is not set, and Homebrew has no openjdk\n%s", ErrNoServer, javaHelp)
}
