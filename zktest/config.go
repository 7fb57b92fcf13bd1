package zktest

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Where Debian's zookeeper package puts its jars. The zookeeper jar's
// manifest Class-Path names every dependency, so it is the whole classpath.
const (
	debianSLF4JSimple = "/usr/share/java/slf4j-simple.jar"
	mainClass         = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// envClasspath, when set, replaces the server the local backend would find
// as the server classpath (for a ZooKeeper 3.6+ tarball:
// "/opt/zookeeper/lib/*"); Debian's slf4j-simple is added when present.
const envClasspath = "ZKTEST_CLASSPATH"

// javaSetup is what the local backend needs from the machine.
type javaSetup struct {
	java      string
	classpath string
	slf4j     string // slf4j-simple jar, or "" when absent or not wanted
	debian    bool   // Debian's jars: add the netty extras TLS needs
	where     string // where the server was found, for the log
}

// findJava locates java and the ZooKeeper server to run: ZKTEST_CLASSPATH,
// else the installation at home (WithServerHome) or found by findServer,
// of release version ("" for the one EnvVersion selects, if any).
func findJava(version, home string) (javaSetup, error) {
	var s javaSetup
	java, jerr := lookJava()
	s.java = java
	s.classpath = os.Getenv(envClasspath)
	if s.classpath != "" {
		s.where, s.debian = envClasspath, true
		if fileExists(debianSLF4JSimple) {
			s.slf4j = debianSLF4JSimple
		}
		return s, jerr
	}
	want, err := wantedVersion(version)
	if err != nil {
		return s, err
	}
	in, serr := findServer(home, want)
	if err := errors.Join(jerr, serr); err != nil {
		return s, err
	}
	s.classpath = strings.Join(in.jars, string(os.PathListSeparator))
	s.where, s.debian = in.where, in.debian
	if in.debian && fileExists(debianSLF4JSimple) {
		s.slf4j = debianSLF4JSimple
	}
	return s, nil
}

// ports of one member: client, quorum (follower->leader) and election.
type ports struct{ client, quorum, election int }

// freePorts reserves n distinct free TCP ports on 127.0.0.1 by listening on
// all of them at once, then releases them. Another process may still grab
// one before the server binds it; Start retries on such a clash.
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("zktest: reserve a port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

// limits returns initLimit and syncLimit (in ticks) for tick.
func limits(tick time.Duration) (initLimit, syncLimit int) {
	ticks := func(d time.Duration, min int) int {
		n := int((d + tick - 1) / tick)
		return max(n, min)
	}
	return ticks(10*time.Second, 10), ticks(2*time.Second, 5)
}

// writeConfig writes zoo.cfg and myid for member i (0-based) of an
// ensemble whose members use all, as member i reaches them (its own entry
// is the ports it binds; see quorumRelays), and returns the config file's
// path.
func writeConfig(cfg *config, dir string, i int, all []ports) (string, error) {
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return "", err
	}
	tickMs := max(int(cfg.tick/time.Millisecond), 1)
	initLimit, syncLimit := limits(cfg.tick)
	forceSync := "no"
	if cfg.fsync {
		forceSync = "yes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\n", tickMs, initLimit, syncLimit)
	if cfg.tls {
		// TLS only: no plaintext client port at all.
		fmt.Fprintf(&b, "dataDir=%s\nsecureClientPort=%d\nsecureClientPortAddress=127.0.0.1\n", data, all[i].client)
	} else {
		fmt.Fprintf(&b, "dataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\n", data, all[i].client)
	}
	fmt.Fprintf(&b, "minSessionTimeout=%d\nmaxSessionTimeout=60000\n", 2*tickMs)
	fmt.Fprintf(&b, "forceSync=%s\npreAllocSize=4096\nmaxClientCnxns=0\n", forceSync)
	if _, ok := cfg.props["zookeeper.4lw.commands.whitelist"]; !ok { // zoo.cfg's would win over WithSystemProperty's
		b.WriteString("4lw.commands.whitelist=*\n")
	}
	b.WriteString("admin.enableServer=false\n")
	if len(all) > 1 {
		b.WriteString("reconfigEnabled=false\n")
		for j, p := range all {
			fmt.Fprintf(&b, "server.%d=127.0.0.1:%d:%d\n", j+1, p.quorum, p.election)
		}
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(i+1)+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, "zoo.cfg")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// javaArgs builds the server command line. The zktest.owner and zktest.dir
// properties mark the process as ours for the reaper and for leak checks.
func javaArgs(cfg *config, js javaSetup, clusterDir, cfgPath string, tc *TLS, member int) []string {
	extra := map[string]string{"zktest.owner": strconv.Itoa(os.Getpid()), "zktest.dir": clusterDir,
		"logback.configurationFile": filepath.Join(clusterDir, logbackFile)}
	if tc != nil {
		maps.Copy(extra, tc.serverProps(member))
	}
	s := Settings{ContainerCheck: cfg.containerCheck, LogOutput: cfg.logOutput, Props: cfg.props, Heap: cfg.heap, JVMFlags: cfg.jvmFlags}
	args := JVMArgs(s, extra)
	cp := js.classpath
	if js.slf4j != "" {
		cp += string(os.PathListSeparator) + js.slf4j
	}
	if tc != nil && js.debian {
		// Netty's TLS handler needs netty-codec (and the transport its
		// resolver), which Debian's zookeeper jar does not list.
		for _, jar := range []string{"netty-codec.jar", "netty-resolver.jar", "netty-transport-native-unix-common.jar"} {
			if p := filepath.Join(debianJavaDir, jar); fileExists(p) {
				cp += string(os.PathListSeparator) + p
			}
		}
	}
	return append(args, "-cp", cp, mainClass, cfgPath)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// logbackFile is the logging configuration, in the cluster directory, of a
// release that logs through logback (3.8 and later) rather than Debian's
// slf4j-simple: one line per event on stdout at WARN, or INFO with
// WithLogOutput, as slf4j-simple's lines.
const logbackFile = "logback.xml"

func writeLogback(dir string, info bool) error {
	level := "WARN"
	if info {
		level = "INFO"
	}
	xml := `<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger - %msg%n</pattern></encoder>
  </appender>
  <root level="` + level + `"><appender-ref ref="OUT"/></root>
</configuration>
`
	return os.WriteFile(filepath.Join(dir, logbackFile), []byte(xml), 0o644)
}
