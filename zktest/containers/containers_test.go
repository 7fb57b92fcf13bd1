package containers_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/proc"
	"github.com/zklock/zklock/zktest"
	"github.com/zklock/zklock/zktest/containers"
)

const envHelper = "ZKTEST_CONTAINERS_HELPER"

func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv(envHelper) == "" {
		if left := ours(); left != "" {
			fmt.Fprintf(os.Stderr, "containers left behind by this test binary:\n%s\n", left)
			code = 1
		}
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/testcontainers/testcontainers-go.(*DockerContainer).followOutput"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"), goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// ours lists the containers labelled with this binary's pid (docker ps -a).
func ours() string {
	out, err := exec.Command("docker", "ps", "-a", "--filter", "label=org.zklock.zktest.owner="+strconv.Itoa(os.Getpid()),
		"--format", "{{.Names}} {{.Status}}").CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func session(t *testing.T, servers []string, timeout time.Duration, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	s, err := zklock.Connect(servers, append([]zklock.SessionOption{zklock.WithSessionTimeout(timeout)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestIntegration_StandaloneFaults(t *testing.T) {
	c := containers.Start(t)
	require.Equal(t, "containers", c.Backend())
	require.Len(t, c.Servers(), 1)
	out, err := c.FourLetter(0, "ruok")
	require.NoError(t, err)
	require.Equal(t, "imok", out)
	mode, err := c.Mode(0)
	require.NoError(t, err)
	require.Equal(t, "standalone", mode)

	conn := c.Connect(t, 4*time.Second)
	_, err = conn.Create("/kept", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	require.NoError(t, c.Kill(0))
	require.ErrorIs(t, c.Kill(0), zktest.ErrNotRunning)
	require.NoError(t, c.Start(0))
	require.Error(t, c.Start(0), "starting a running member")
	require.Equal(t, c.Servers()[0], c.Cluster.Servers()[0])
	require.Eventually(t, func() bool {
		_, _, err := conn.Get("/kept") // the data survived SIGKILL
		return err == nil
	}, 20*time.Second, 50*time.Millisecond)

	require.NoError(t, c.Pause(0))
	_, err = c.FourLetter(0, "ruok")
	require.Error(t, err, "a paused member answers nothing")
	require.NoError(t, c.Resume(0))
	require.NoError(t, c.WaitServing(context.Background()))

	require.NoError(t, c.Stop(0))
	require.NoError(t, c.Start(0))
	require.Eventually(t, func() bool { _, _, err := conn.Get("/kept"); return err == nil }, 20*time.Second, 50*time.Millisecond)

	// Expire works through the recorded credentials.
	victim := c.Connect(t, 4*time.Second)
	require.Eventually(t, func() bool { return victim.State() == zk.StateHasSession }, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, c.Expire(victim.SessionID()))
}

func TestIntegration_EnsembleKillLeader(t *testing.T) {
	c := containers.Start(t, zktest.WithServers(3))
	require.Len(t, c.Servers(), 3)
	for _, a := range c.Servers() {
		ip, _, err := net.SplitHostPort(a)
		require.NoError(t, err)
		require.False(t, net.ParseIP(ip).IsLoopback(), "member %s: want its own address on the private network", a)
	}
	leader, err := c.Leader()
	require.NoError(t, err)

	// T = 6s: the loss limit is 4s, the SIGKILL resets every connection to
	// the leader at once and the followers elect within about 2s.
	s := session(t, c.Servers(), 6*time.Second)
	m, err := zklock.NewMutex(s, "/locks/kill-leader")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hold, err := m.Lock(ctx)
	require.NoError(t, err)
	node, token := hold.Node(), hold.Token()

	require.NoError(t, c.Kill(leader))
	var next int
	require.Eventually(t, func() bool {
		next, err = c.Leader()
		return err == nil && next != leader
	}, 30*time.Second, 100*time.Millisecond, "no new leader among the survivors")
	t.Logf("leader zk%d killed, zk%d elected", leader+1, next+1)

	// Per policy: the hold survives a suspension shorter than the loss
	// limit (same node, same token), or is reported lost; it is never
	// silently lost.
	probe := c.ConnectTo(t, []string{c.Servers()[next]}, 6*time.Second)
	select {
	case <-hold.Done():
		t.Logf("hold reported lost: %v", hold.Err())
		require.Error(t, hold.Err())
	case <-time.After(2 * time.Second):
		_, st, err := probe.Get(node)
		require.NoError(t, err, "the holder's node must still exist while its hold is not reported lost")
		require.Equal(t, hold.SessionID(), st.EphemeralOwner)
		require.Equal(t, token, hold.Token())
		require.NoError(t, hold.Release())
	}
	require.NoError(t, c.Start(leader))
	require.NoError(t, c.WaitServing(context.Background()))
}

func TestIntegration_PartitionAndHeal(t *testing.T) {
	c := containers.StartEnsemble(t)
	leader, err := c.Leader()
	require.NoError(t, err)
	f := (leader + 1) % 3 // a follower goes away; the test process stays with the majority
	var majority []int
	for i := range 3 {
		if i != f {
			majority = append(majority, i)
		}
	}
	lone := c.ConnectTo(t, []string{c.Servers()[f]}, 4*time.Second)
	require.Eventually(t, func() bool { return lone.State() == zk.StateHasSession }, 10*time.Second, 20*time.Millisecond)

	require.NoError(t, c.Partition(append(majority, containers.Host), []int{f}))
	require.Eventually(t, func() bool {
		_, err := c.Mode(f)
		return err != nil && strings.Contains(err.Error(), "not serving")
	}, 20*time.Second, 100*time.Millisecond, "the partitioned member must stop serving")
	for _, i := range majority {
		mode, err := c.Mode(i)
		require.NoError(t, err)
		require.Contains(t, []string{"leader", "follower"}, mode)
	}
	_, err = c.FourLetter(f, "ruok")
	require.Error(t, err, "the test process must not reach the partitioned member")
	require.Eventually(t, func() bool { return lone.State() != zk.StateHasSession }, 20*time.Second, 50*time.Millisecond,
		"a client of the partitioned member only must lose its connection")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, i := range majority { // the majority still serves
		conn := c.ConnectTo(t, []string{c.Servers()[i]}, 4*time.Second)
		_, err := conn.Create(fmt.Sprintf("/during-%d", i), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}

	require.NoError(t, c.Heal())
	require.NoError(t, c.WaitServing(ctx))
	mode, err := c.Mode(f)
	require.NoError(t, err)
	require.Equal(t, "follower", mode)
	require.Eventually(t, func() bool { _, _, err := lone.Get("/during-" + strconv.Itoa(majority[0])); return err == nil },
		20*time.Second, 50*time.Millisecond, "the healed member's client sees what the majority wrote")
}

func TestIntegration_PartitionKeepsPartitionAcrossRestart(t *testing.T) {
	c := containers.StartEnsemble(t)
	require.NoError(t, c.Partition([]int{0, 1, containers.Host}, []int{2}))
	require.NoError(t, c.Kill(2))
	require.NoError(t, c.Start(2)) // two members serve, so Start waits for them only
	require.Never(t, func() bool { _, err := c.Mode(2); return err == nil }, 3*time.Second, 200*time.Millisecond,
		"a restarted partitioned member must stay cut off")
	require.NoError(t, c.Heal())
	require.NoError(t, c.WaitServing(context.Background()))
}

func TestIntegration_IsolateOneClient(t *testing.T) {
	c := containers.StartEnsemble(t)
	p := c.Proxy(t)
	p.Isolate(0, 1) // this client keeps member 2 only; everyone else sees all
	conn := p.Connect(t, 4*time.Second)
	require.Eventually(t, func() bool { return conn.State() == zk.StateHasSession }, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, c.Servers()[2], conn.Server(), "the isolated client can only be on member 2")
	_, err := c.FourLetter(0, "ruok")
	require.NoError(t, err, "other clients still reach member 0")
	p.Heal()
}

func TestPartitionBadGroups(t *testing.T) {
	c := containers.StartEnsemble(t)
	for _, groups := range [][][]int{{{0, 1}}, {{0, 1}, {1, 2}}, {{0, 1, 2, 3}}, {{0, 1, 2}, {containers.Host, containers.Host}}} {
		require.ErrorIs(t, c.Partition(groups...), containers.ErrBadPartition, "%v", groups)
	}
	require.ErrorIs(t, c.RejectClients(5), containers.ErrBadPartition)
}

// TestIntegration_ReapAfterKill9: a test binary killed with SIGKILL
// mid-run leaves its containers behind; the next Start removes them.
func TestIntegration_ReapAfterKill9(t *testing.T) {
	if os.Getenv(envHelper) != "" {
		c := containers.StartEnsemble(t)
		fmt.Println("STARTED", c.Network())
		select {} // until killed
	}
	requireEngine(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("the docker CLI is needed to look at the engine's containers")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestIntegration_ReapAfterKill9$", "-test.v")
	cmd.Env = append(os.Environ(), envHelper+"=1")
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	buf := make([]byte, 4096)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "STARTED") {
		n, err := out.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("helper did not start its cluster: %v\n%s", err, seen.String())
		}
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no t.Cleanup runs
	cmd.Wait()
	label := "label=org.zklock.zktest.owner=" + strconv.Itoa(cmd.Process.Pid)
	left, err := exec.Command("docker", "ps", "-aq", "--filter", label).Output()
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(left)), 3, "the killed binary's members are still there")

	containers.Start(t) // reaps first
	left, err = exec.Command("docker", "ps", "-aq", "--filter", label).Output()
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(left)), "stale containers were not reaped")
	nets, err := exec.Command("docker", "network", "ls", "-q", "--filter", label).Output()
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(nets)), "stale network was not reaped")
}

// An image that ZKTEST_IMAGE names and no registry serves fails the start
// (it does not skip), saying that its pull failed. The registry is a
// loopback port nobody listens on.
func TestIntegration_MissingImage(t *testing.T) {
	if image := os.Getenv(envHelper); image != "" {
		t.Setenv(containers.EnvImage, image)
		containers.Start(t)
		return
	}
	requireEngine(t) // without one, the helper's Start skips instead of failing
	image := "127.0.0.1:" + strconv.Itoa(closedPort(t)) + "/zklock/no-such-image:0"
	cmd := exec.Command(os.Args[0], "-test.run=^TestIntegration_MissingImage$", "-test.v")
	cmd.Env = append(os.Environ(), envHelper+"="+image)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "the start must fail: %s", out)
	require.Contains(t, string(out), "--- FAIL: TestIntegration_MissingImage", "the start must fail, not skip: %s", out)
	require.Contains(t, string(out), "zktest/containers: image not on the local Docker engine: "+image+", and its pull failed")
}

// closedPort returns a loopback port that nothing listens on (it did a
// moment ago).
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// docker runs the docker CLI and returns its output, failing the test if
// it fails.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	require.NoError(t, err, "docker %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// An image that ZKTEST_IMAGE names and the engine lacks is pulled: the
// repository's image, pushed under another name to a registry run on
// 127.0.0.1 (Debian's docker-registry, which the engine reaches over plain
// HTTP, as it does any loopback registry) and untagged, starts an ensemble.
func TestIntegration_PullsNamedImage(t *testing.T) {
	requireEngine(t)
	registry, err := exec.LookPath("docker-registry")
	require.NoError(t, err, "Debian's docker-registry serves the test's registry: apt-get install docker-registry")
	src, err := containers.Image()
	require.NoError(t, err)
	docker(t, "image", "inspect", "--format", "{{.Id}}", src)

	dir := t.TempDir()
	port := closedPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cfg := fmt.Sprintf("version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", dir+"/data", addr)
	require.NoError(t, os.WriteFile(dir+"/config.yml", []byte(cfg), 0o644))
	var logs proc.Buffer
	cmd := exec.Command(registry, "serve", dir+"/config.yml")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("docker-registry's log:\n%s", logs.String())
		}
	})
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "the registry does not listen on %s", addr)

	name := addr + "/test/zookeeper:" + strings.TrimPrefix(src, containers.ImageRepo+":")
	docker(t, "tag", src, name)
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", name).Run() })
	docker(t, "push", name)
	docker(t, "rmi", name)
	_, err = exec.Command("docker", "image", "inspect", name).CombinedOutput()
	require.Error(t, err, "%s is still on the engine", name)

	t.Setenv(containers.EnvImage, name)
	c := containers.StartEnsemble(t)
	docker(t, "image", "inspect", "--format", "{{.Id}}", name) // pulled
	leader, err := c.Leader()
	require.NoError(t, err)
	mode, err := c.Mode(leader)
	require.NoError(t, err)
	require.Equal(t, "leader", mode)
}

// requireEngine skips a test that runs Start in a helper process, as Start
// would skip it, when no Docker engine answers.
func requireEngine(t *testing.T) {
	t.Helper()
	p, err := containers.Engine(t.Context())
	if err != nil {
		t.Skipf("zktest/containers: %v", err)
	}
	p.Close()
}

// Without a Docker engine, every test of this package skips, saying why in
// one line, and none fails: the package's tests run again in a child test
// binary whose DOCKER_HOST is a socket nobody listens on (and whose HOME
// has no testcontainers properties), which must pass with every test
// skipped for want of an engine. This is what make test does on a machine
// without Docker.
func TestNoEngineSkips(t *testing.T) {
	list, err := exec.Command(os.Args[0], "-test.list=^Test").Output()
	require.NoError(t, err)
	var want []string
	for _, name := range strings.Fields(string(list)) {
		if name != "TestNoEngineSkips" {
			want = append(want, name)
		}
	}
	require.NotEmpty(t, want)

	dir := t.TempDir()
	host := "unix://" + dir + "/no-docker.sock"
	cmd := exec.Command(os.Args[0], "-test.v", "-test.count=1", "-test.skip=^TestNoEngineSkips$")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "DOCKER_HOST=" + host}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "without an engine the tests must pass (skipped):\n%s", out)
	skip := regexp.MustCompile(`(?m)^=== RUN   (\S+)\n\s+\S+\.go:\d+: (.*)\n--- SKIP: (\S+) `)
	reasons := map[string]string{}
	for _, m := range skip.FindAllStringSubmatch(string(out), -1) {
		if m[1] == m[3] { // one line between RUN and SKIP: the reason
			reasons[m[1]] = m[2]
		}
	}
	for _, name := range want {
		require.Contains(t, reasons, name, "%s did not skip:\n%s", name, out)
		require.True(t, strings.HasPrefix(reasons[name], "zktest/containers: no Docker engine answers at DOCKER_HOST="+host+
			" (start dockerd or set DOCKER_HOST): "), "%s: %s", name, reasons[name])
	}
	require.NotContains(t, string(out), "--- FAIL")
	require.NotContains(t, string(out), "Connected to docker", "a fallback engine was used")
}

// Each release zktest runs has its image, and the image runs that release.
func TestIntegration_ImagePerVersion(t *testing.T) {
	requireEngine(t) // the subtests' Start would skip, but not this test
	for _, v := range zktest.Versions() {
		t.Run(v, func(t *testing.T) {
			t.Setenv(zktest.EnvVersion, v)
			c := containers.Start(t)
			got, err := c.ServerVersion(0)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(got, v+"."), "image for %s runs ZooKeeper %s", v, got)
		})
	}
}

// The image a test runs follows ZKTEST_IMAGE, else ZKTEST_ZK_VERSION. (It
// needs no engine, but every test of this package skips without one: see
// TestNoEngineSkips.)
func TestImage(t *testing.T) {
	requireEngine(t)
	for _, tc := range []struct{ image, version, want, err string }{
		{"", "", "zklock/zookeeper:3.9", ""},
		{"", "3.8", "zklock/zookeeper:3.8", ""},
		{"mine:1", "3.8", "mine:1", ""},
		{"", "2.0", "", "want one of 3.9, 3.8"},
	} {
		t.Setenv(containers.EnvImage, tc.image)
		t.Setenv(zktest.EnvVersion, tc.version)
		got, err := containers.Image()
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}
