package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/zklock/zklock/internal/proc"
	"github.com/zklock/zklock/zktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const session = 10 * time.Second // the test server allows 1s..10s

const uuidRE = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`

// curatorNode matches a Curator protected node <path>/_c_<uuid>-<lockName><seq>.
func curatorNode(path, lockName string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(path) + `/_c_` + uuidRE + `-` + regexp.QuoteMeta(lockName) + `\d{10}$`)
}

func kazooNode(path string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(path) + `/[0-9a-f]{32}__lock__\d{10}$`)
}

func TestIntegration_CuratorMutexExclusion(t *testing.T) {
	zk := startZooKeeper(t)
	a, b := Curator(t, zk, session), Curator(t, zk, session)
	const path = "/it/mutex"
	a.Must(t, "mutex m "+path)
	b.Must(t, "mutex m "+path)

	a.Must(t, "acquire m")
	ea := waitEvent(t, a, "m", "acquired")
	mustMatch(t, curatorNode(path, "lock-"), ea.Arg)

	// B waits while A holds: a bounded acquire times out...
	b.Must(t, "acquire m 500")
	waitEvent(t, b, "m", "timeout")
	// ...and Curator 5.4 deletes the timed-out node.
	if got := b.Must(t, "participants m"); got != ea.Arg {
		t.Fatalf("participants after B's timeout = %q, want only A's node %q", got, ea.Arg)
	}

	b.Must(t, "acquire m")
	noEvent(t, b, "m", "acquired")
	a.Must(t, "release m")
	eb := waitEvent(t, b, "m", "acquired")
	mustMatch(t, curatorNode(path, "lock-"), eb.Arg)
	if seq(t, eb.Arg) <= seq(t, ea.Arg) {
		t.Fatalf("B's node %s does not follow A's %s", eb.Arg, ea.Arg)
	}

	// And the other way round.
	a.Must(t, "acquire m 300")
	waitEvent(t, a, "m", "timeout")
	b.Must(t, "release m")
	a.Must(t, "acquire m")
	waitEvent(t, a, "m", "acquired")
	a.Must(t, "release m")
}

func TestIntegration_CuratorNodeNames(t *testing.T) {
	zk := startZooKeeper(t)
	p := Curator(t, zk, session)

	p.Must(t, "mutex m /it/names/mutex")
	p.Must(t, "acquire m")
	e := waitEvent(t, p, "m", "acquired")
	mustMatch(t, curatorNode("/it/names/mutex", "lock-"), e.Arg)
	if got := p.Must(t, "participants m"); got != e.Arg {
		t.Fatalf("participants = %q, want %q", got, e.Arg)
	}

	p.Must(t, "rwwrite w /it/names/rw")
	p.Must(t, "rwread r /it/names/rw")
	p.Must(t, "acquire w")
	mustMatch(t, curatorNode("/it/names/rw", "__WRIT__"), waitEvent(t, p, "w", "acquired").Arg)
	p.Must(t, "acquire r") // downgrade: the write holder takes the read half at once
	mustMatch(t, curatorNode("/it/names/rw", "__READ__"), waitEvent(t, p, "r", "acquired").Arg)

	p.Must(t, "semmutex s /it/names/semmutex")
	p.Must(t, "acquire s")
	mustMatch(t, curatorNode("/it/names/semmutex/leases", "lease-"), waitEvent(t, p, "s", "acquired").Arg)

	for _, name := range []string{"m", "r", "w", "s"} {
		p.Must(t, "release "+name)
	}
	if _, err := p.Do("release m"); err == nil {
		t.Fatal("releasing an unheld mutex succeeded")
	}
}

func TestIntegration_CuratorReadWriteLock(t *testing.T) {
	zk := startZooKeeper(t)
	a, b, c := Curator(t, zk, session), Curator(t, zk, session), Curator(t, zk, session)
	const path = "/it/rw"
	a.Must(t, "rwread r "+path)
	b.Must(t, "rwread r "+path)
	c.Must(t, "rwwrite w "+path)

	// Two readers share.
	a.Must(t, "acquire r")
	waitEvent(t, a, "r", "acquired")
	b.Must(t, "acquire r 5000")
	waitEvent(t, b, "r", "acquired")

	// A writer waits for both.
	c.Must(t, "acquire w 500")
	waitEvent(t, c, "w", "timeout")
	c.Must(t, "acquire w")
	a.Must(t, "release r")
	noEvent(t, c, "w", "acquired")
	b.Must(t, "release r")
	ew := waitEvent(t, c, "w", "acquired")
	mustMatch(t, curatorNode(path, "__WRIT__"), ew.Arg)

	// Readers wait for the writer; the writer itself may take the read half.
	a.Must(t, "acquire r 500")
	waitEvent(t, a, "r", "timeout")
	c.Must(t, "rwread r "+path)
	c.Must(t, "acquire r 5000")
	waitEvent(t, c, "r", "acquired")
	c.Must(t, "release w")
	a.Must(t, "acquire r 5000") // only readers left
	waitEvent(t, a, "r", "acquired")
	a.Must(t, "release r")
	c.Must(t, "release r")
}

func TestIntegration_CuratorSemaphore(t *testing.T) {
	zk := startZooKeeper(t)
	peers := []*Peer{Curator(t, zk, session), Curator(t, zk, session), Curator(t, zk, session)}
	const path = "/it/sem"
	for _, p := range peers {
		p.Must(t, "semaphore s "+path+" 2")
	}
	a, b, c := peers[0], peers[1], peers[2]
	a.Must(t, "acquire s")
	la := waitEvent(t, a, "s", "acquired")
	mustMatch(t, curatorNode(path+"/leases", "lease-"), la.Arg)
	b.Must(t, "acquire s")
	lb := waitEvent(t, b, "s", "acquired")
	mustMatch(t, curatorNode(path+"/leases", "lease-"), lb.Arg)

	// The third waits while both leases are out.
	c.Must(t, "acquire s 500")
	waitEvent(t, c, "s", "timeout")
	got := strings.Split(c.Must(t, "participants s"), ",")
	if len(got) != 2 || !contains(got, filepath.Base(la.Arg)) || !contains(got, filepath.Base(lb.Arg)) {
		t.Fatalf("lease holders = %v, want the nodes of A and B", got)
	}
	c.Must(t, "acquire s")
	noEvent(t, c, "s", "acquired")
	a.Must(t, "release s")
	mustMatch(t, curatorNode(path+"/leases", "lease-"), waitEvent(t, c, "s", "acquired").Arg)
	b.Must(t, "release s")
	c.Must(t, "release s")
}

func TestIntegration_CuratorSemaphoreMutexAndMultiLock(t *testing.T) {
	zk := startZooKeeper(t)
	a, b := Curator(t, zk, session), Curator(t, zk, session)

	a.Must(t, "semmutex sm /it/semmutex")
	b.Must(t, "semmutex sm /it/semmutex")
	a.Must(t, "acquire sm")
	waitEvent(t, a, "sm", "acquired")
	b.Must(t, "acquire sm 500")
	waitEvent(t, b, "sm", "timeout")
	b.Must(t, "acquire sm")
	a.Must(t, "release sm")
	waitEvent(t, b, "sm", "acquired")
	b.Must(t, "release sm")

	a.Must(t, "multi ml /it/multi/1,/it/multi/2")
	b.Must(t, "mutex m2 /it/multi/2")
	a.Must(t, "acquire ml")
	if e := waitEvent(t, a, "ml", "acquired"); e.Arg != "" {
		t.Fatalf("multi lock reported a node: %q", e.Arg)
	}
	b.Must(t, "acquire m2 500")
	waitEvent(t, b, "m2", "timeout")
	b.Must(t, "acquire m2")
	a.Must(t, "release ml")
	waitEvent(t, b, "m2", "acquired")
	b.Must(t, "release m2")
}

func TestIntegration_CuratorLeaderSelector(t *testing.T) {
	zk := startZooKeeper(t)
	a, b := Curator(t, zk, session), Curator(t, zk, session)
	const path = "/it/leader"
	a.Must(t, "leader l "+path+" alpha")
	waitEvent(t, a, "l", "leader")
	b.Must(t, "leader l "+path+" beta")

	for _, p := range []*Peer{a, b} {
		if id := p.Must(t, "leaderid l"); id != "alpha" {
			t.Fatalf("leader id = %q, want alpha", id)
		}
	}
	if _, err := b.Do("resign l"); err == nil {
		t.Fatal("B resigned a leadership it does not have")
	}
	noEvent(t, b, "l", "leader")

	a.Must(t, "resign l")
	waitEvent(t, a, "l", "notleader")
	waitEvent(t, b, "l", "leader")
	noEvent(t, a, "l", "leader") // no autoRequeue: A stays out
	for _, p := range []*Peer{a, b} {
		if id := p.Must(t, "leaderid l"); id != "beta" {
			t.Fatalf("leader id after hand-over = %q, want beta", id)
		}
	}
	b.Must(t, "resign l")
	waitEvent(t, b, "l", "notleader")
}

func TestIntegration_CuratorRevocation(t *testing.T) {
	zk := startZooKeeper(t)
	a, b := Curator(t, zk, session), Curator(t, zk, session)
	const path = "/it/revoke"
	a.Must(t, "mutex m "+path)
	a.Must(t, "revocable m")
	a.Must(t, "acquire m")
	node := waitEvent(t, a, "m", "acquired").Arg

	b.Must(t, "revoke "+node)
	waitEvent(t, a, "m", "revoke-requested")

	// Revocation is advisory: A still holds until it releases.
	b.Must(t, "mutex m "+path)
	b.Must(t, "acquire m 300")
	waitEvent(t, b, "m", "timeout")
	b.Must(t, "acquire m")
	a.Must(t, "release m")
	waitEvent(t, b, "m", "acquired")
	b.Must(t, "release m")
}

func TestIntegration_CuratorKilledHolderExpires(t *testing.T) {
	zk := startZooKeeper(t)
	a, b := Curator(t, zk, 2*time.Second), Curator(t, zk, session)
	if a.Pid() <= 0 || a.Pid() == b.Pid() {
		t.Fatalf("pids %d, %d", a.Pid(), b.Pid())
	}
	a.Must(t, "mutex m /it/kill")
	b.Must(t, "mutex m /it/kill")
	a.Must(t, "acquire m")
	waitEvent(t, a, "m", "acquired")
	b.Must(t, "acquire m")
	noEvent(t, b, "m", "acquired")

	a.Kill() // no release, no session close: B gets the lock once A's session expires
	if _, err := a.Do("participants m"); err == nil {
		t.Fatal("a killed peer still answers")
	}
	waitEvent(t, b, "m", "acquired")
	b.Must(t, "release m")
}

func TestIntegration_KazooLockExclusion(t *testing.T) {
	zk := startZooKeeper(t)
	a, b := Kazoo(t, zk, session), Kazoo(t, zk, session)
	const path = "/it/kazoo"
	a.Must(t, "lock ka "+path)
	b.Must(t, "lock kb "+path+" -")

	a.Must(t, "acquire ka")
	ea := waitEvent(t, a, "ka", "acquired")
	mustMatch(t, kazooNode(path), ea.Arg)

	b.Must(t, "acquire kb 500")
	waitEvent(t, b, "kb", "timeout")
	if got := b.Must(t, "contenders kb"); got != `["ka"]` {
		t.Fatalf("contenders = %q, want [\"ka\"]", got)
	}
	b.Must(t, "acquire kb")
	noEvent(t, b, "kb", "acquired")
	a.Must(t, "release ka")
	eb := waitEvent(t, b, "kb", "acquired")
	mustMatch(t, kazooNode(path), eb.Arg)
	if seq(t, eb.Arg) <= seq(t, ea.Arg) {
		t.Fatalf("B's node %s does not follow A's %s", eb.Arg, ea.Arg)
	}
	b.Must(t, "release kb")
	if _, err := b.Do("release kb"); err == nil {
		t.Fatal("releasing an unheld kazoo lock succeeded")
	}
}

// TestIntegration_KazooWaitsForCuratorMutex checks the one-way interop of the
// protocol doc §4.2: kazoo Lock with extra_lock_patterns ["-lock-"] waits for
// a Curator InterProcessMutex holder; a default kazoo Lock does not.
func TestIntegration_KazooWaitsForCuratorMutex(t *testing.T) {
	zk := startZooKeeper(t)
	c, k := Curator(t, zk, session), Kazoo(t, zk, session)
	const path = "/it/interop"
	c.Must(t, "mutex m "+path)
	c.Must(t, "acquire m")
	cn := waitEvent(t, c, "m", "acquired").Arg

	k.Must(t, "lock k "+path+" -lock-")
	k.Must(t, "acquire k 1000")
	waitEvent(t, k, "k", "timeout")
	// kazoo lists the contenders' node data. Curator's is this host's
	// address as Java resolves it, or empty when the host name does not
	// resolve, so only the count and the absence of kazoo's own name say
	// anything.
	var contenders []string
	if got := k.Must(t, "contenders k"); json.Unmarshal([]byte(got), &contenders) != nil ||
		len(contenders) != 1 || contenders[0] == "k" {
		t.Fatalf("kazoo contenders = %s, want just the Curator holder", got)
	}

	// Without the extra pattern kazoo does not see the Curator node at all.
	k.Must(t, "lock blind "+path)
	k.Must(t, "acquire blind 5000")
	waitEvent(t, k, "blind", "acquired")
	k.Must(t, "release blind")

	k.Must(t, "acquire k")
	noEvent(t, k, "k", "acquired")
	c.Must(t, "release m")
	kn := waitEvent(t, k, "k", "acquired").Arg
	mustMatch(t, kazooNode(path), kn)
	if seq(t, kn) <= seq(t, cn) {
		t.Fatalf("kazoo node %s does not follow Curator's %s", kn, cn)
	}
	k.Must(t, "release k")
}

func waitEvent(t *testing.T, p *Peer, name, kind string) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := p.WaitEvent(ctx, name, kind)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// noEvent fails if the peer already reported name/kind. It cannot prove that
// the event will not come, but catches an early one.
func noEvent(t *testing.T, p *Peer, name, kind string) {
	t.Helper()
	for _, e := range p.Buffered() {
		if e.Name == name && e.Kind == kind {
			t.Fatalf("unexpected event %q", e)
		}
	}
}

func mustMatch(t *testing.T, re *regexp.Regexp, s string) {
	t.Helper()
	if !re.MatchString(s) {
		t.Fatalf("%q does not match %s", s, re)
	}
}

func seq(t *testing.T, node string) int {
	t.Helper()
	if len(node) < 10 {
		t.Fatalf("no sequence in %q", node)
	}
	n, err := strconv.Atoi(node[len(node)-10:])
	if err != nil {
		t.Fatalf("no sequence in %q: %v", node, err)
	}
	return n
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// startZooKeeper runs a private standalone ZooKeeper 3.8 (tickTime 500ms, so
// sessions of 1s..10s) on a free loopback port until the test ends.
func startZooKeeper(t *testing.T) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java not found (install the interop test dependencies with `make deps`): %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out := proc.NewTail(64 << 10)
	cmd := exec.Command(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false", "-Dzookeeper.4lw.commands.whitelist=ruok",
		"-cp", filepath.Join(JarDir, "zookeeper.jar")+":"+filepath.Join(JarDir, "slf4j-nop.jar"),
		"org.apache.zookeeper.server.ZooKeeperServerMain", strconv.Itoa(port), t.TempDir(), "500")
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ZooKeeper: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() && out.String() != "" {
			t.Logf("ZooKeeper output:\n%s", out)
		}
	})

	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !ruok(addr) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("ZooKeeper exited: %v\n%s", err, out)
		case <-deadline.C:
			t.Fatalf("ZooKeeper on %s not serving after 30s\n%s", addr, out)
		case <-tick.C:
		}
	}
	return addr
}

func ruok(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("ruok")); err != nil {
		return false
	}
	buf := make([]byte, 4)
	n, _ := c.Read(buf)
	return string(buf[:n]) == "imok"
}

// Each generation's peers run the releases it names: the Curator peer
// loads Curator and the ZooKeeper client from the generation's jars, and
// kazoo comes from the generation's directory.
func TestIntegration_GenerationsRunTheirReleases(t *testing.T) {
	zk := startZooKeeper(t)
	Each(t, func(t *testing.T, g *Generation) {
		c := g.Curator(t, zk, session)
		where := c.Must(t, "where")
		switch g {
		case Bookworm():
			if !strings.Contains(where, "curator="+JarDir+"/curator-framework") {
				t.Errorf("where = %q, want %q in it", where, "curator="+JarDir+"/curator-framework")
			}
			if !strings.Contains(where, "zookeeper="+JarDir+"/zookeeper") {
				t.Errorf("where = %q, want %q in it", where, "zookeeper="+JarDir+"/zookeeper")
			}
			if !strings.Contains(where, "zkversion=3.8.") {
				t.Errorf("where = %q, want %q in it", where, "zkversion=3.8.")
			}
		case Newest():
			if !strings.Contains(where, "curator="+zktest.CacheDir()+"/curator-5/") {
				t.Errorf("where = %q, want %q in it", where, "curator="+zktest.CacheDir()+"/curator-5/")
			}
			if !strings.Contains(where, "zookeeper="+zktest.CacheDir()+"/zookeeper-3.9/") {
				t.Errorf("where = %q, want %q in it", where, "zookeeper="+zktest.CacheDir()+"/zookeeper-3.9/")
			}
			if !strings.Contains(where, "zkversion=3.9.") {
				t.Errorf("where = %q, want %q in it", where, "zkversion=3.9.")
			}
		}
		k := g.Kazoo(t, zk, session)
		k.Must(t, "lock K /gen/k -")
		k.Must(t, "acquire K")
		waitEvent(t, k, "K", "acquired")
		k.Must(t, "release K")
	})
}
