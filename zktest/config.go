package zktest

import (
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Where Debian's zookeeper package puts its jars. The zookeeper jar's
// manifest Class-Path names every dependency, so it is the whole classpath.
const (
	debianJavaDir      = "/usr/share/java"
	debianZooKeeperJar = "/usr/share/java/zookeeper.jar"
	debianSLF4JSimple  = "/usr/share/java/slf4j-simple.jar"
	mainClass          = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
)

// envClasspath, when set, replaces the release EnvVersion selects as the
// server classpath (for a ZooKeeper 3.6+ tarball: "/opt/zookeeper/lib/*").
const envClasspath = "ZKTEST_CLASSPATH"

// javaSetup is what the local backend needs from the machine.
type javaSetup struct {
	java      string
	classpath string
	slf4j     string // slf4j-simple jar, or "" when absent
}

// findJava locates java and ZooKeeper release version ("" for the one
// EnvVersion selects), or explains how to install them.
func findJava(version string) (javaSetup, error) {
	var s javaSetup
	hint := "run `make deps` (scripts/install-deps.sh) to install ZooKeeper and Java"
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	p, err := exec.LookPath(java)
	if err != nil {
		return s, fmt.Errorf("zktest: java not found (%v); %s", err, hint)
	}
	s.java = p
	s.classpath = os.Getenv(envClasspath)
	if s.classpath == "" {
		v, err := SelectedVersion()
		if version != "" {
			v, err = checkVersion(version, "WithVersion")
		}
		if err != nil {
			return s, err
		}
		if s.classpath, err = releaseFor(v).classpath(); err != nil {
			return s, err
		}
	}
	if _, err := os.Stat(debianSLF4JSimple); err == nil {
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
	extra := map[string]string{"zktest.owner": strconv.Itoa(os.Getpid()), "zktest.dir": clusterDir}
	if tc != nil {
		maps.Copy(extra, tc.serverProps(member))
	}
	s := Settings{ContainerCheck: cfg.containerCheck, LogOutput: cfg.logOutput, Props: cfg.props, Heap: cfg.heap, JVMFlags: cfg.jvmFlags}
	args := JVMArgs(s, extra)
	cp := js.classpath
	if js.slf4j != "" {
		cp += string(os.PathListSeparator) + js.slf4j
	}
	if tc != nil {
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
