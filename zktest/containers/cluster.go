package containers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/pkg/authconfig"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/zklock/zklock/zktest"
)

// EnvImage ("ZKTEST_IMAGE") names the image members run, pulled when the
// engine does not have it: any image with the official zookeeper image's
// layout and environment ("zookeeper:3.9" itself; see the package doc).
// When unset, the local image of the release zktest.EnvVersion selects
// (ImageRepo:3.9 by default, ImageRepo:3.8 with ZKTEST_ZK_VERSION=3.8),
// which is never pulled.
const EnvImage = "ZKTEST_IMAGE"

// ImageRepo is the repository zklock's scripts/zk-image.sh tags its
// images in, one tag per ZooKeeper release ("zklock/zookeeper:3.9"), built
// from Debian packages in the official image's layout.
const ImageRepo = "zklock/zookeeper"

// ClientPort is the members' client port, on their container addresses.
const ClientPort = 2181

// Errors of this package; test them with errors.Is.
var (
	// ErrNoImage: the image is not on the local engine, and ZKTEST_IMAGE
	// did not name it or its pull failed.
	ErrNoImage = errors.New("zktest/containers: image not on the local Docker engine")
	// ErrBadPartition: Partition's groups do not name every member once.
	ErrBadPartition = errors.New("zktest/containers: bad partition")
)

func init() {
	// The reaper's image would have to be pulled; see the package doc.
	if _, ok := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !ok {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

// Cluster is a ZooKeeper standalone server or ensemble in containers. It
// embeds *zktest.Cluster, so it has the same API as the process backend
// (Servers, Kill, Stop, Start, Restart, Pause, Resume, Leader, WaitServing,
// FourLetter, Expire, Connect, Dialer, Proxy, ...), and adds partitions.
// All methods are safe for concurrent use.
type Cluster struct {
	*zktest.Cluster
	b *backend
}

type member struct {
	mu      sync.Mutex // serialises faults on this member
	ctr     testcontainers.Container
	ip      netip.Addr
	running bool
	paused  bool
	logs    *logSink
}

type backend struct {
	cfg      zktest.Settings
	provider *testcontainers.DockerProvider
	net      *testcontainers.DockerNetwork
	gateway  netip.Addr
	members  []*member

	pmu     sync.Mutex
	groups  map[int]int // member (or Host) -> group; nil: no partition
	reject  map[int]bool
	applied []string // per member: the last ruleset installed
}

// Start starts a standalone ZooKeeper server (or WithServers(n) members) in
// containers on a fresh private network and returns when the ensemble
// serves. Options are zktest's; WithLogOutput receives the members' logs
// through a testcontainers log consumer, prefixed "zk<N> ". Containers and
// network are removed in t.Cleanup; stale ones of killed test binaries are
// removed first.
//
// It must be called from the test's goroutine. It skips the test when no
// Docker engine answers, and fails it when the image is missing (build it
// with scripts/zk-image.sh) or the members do not serve within the start
// timeout (the error quotes the members' last log lines). An image that
// EnvImage names is pulled first when the engine lacks it, within
// PullTimeout.
func Start(t testing.TB, opts ...zktest.Option) *Cluster {
	t.Helper()
	return start(t, 1, opts)
}

// StartEnsemble is Start with 3 members unless WithServers says otherwise.
func StartEnsemble(t testing.TB, opts ...zktest.Option) *Cluster {
	t.Helper()
	return start(t, 3, opts)
}

func start(t testing.TB, n int, opts []zktest.Option) *Cluster {
	t.Helper()
	cfg := zktest.Resolve(n, opts...)
	if cfg.Servers < 1 {
		t.Fatalf("zktest/containers: WithServers(%d): need at least 1 server", cfg.Servers)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartTimeout)
	defer cancel()
	p, err := engineFor(ctx, t)
	if err != nil {
		t.Skipf("zktest/containers: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	Reap(ctx, p)
	image, err := Image()
	if err != nil {
		t.Fatal(err)
	}
	if err := ensureImage(p, image, t); err != nil {
		t.Fatal(err)
	}
	b := &backend{cfg: cfg, provider: p, applied: make([]string, cfg.Servers)}
	if err := b.createNetwork(ctx, t); err != nil {
		t.Fatal(err)
	}
	servers := make([]string, cfg.Servers)
	for i := range cfg.Servers {
		m := &member{ip: b.memberIP(i), logs: newLogSink(fmt.Sprintf("zk%d ", i+1), cfg.LogOutput)}
		b.members = append(b.members, m)
		servers[i] = net.JoinHostPort(m.ip.String(), strconv.Itoa(ClientPort))
	}
	// Members are created in parallel: an ensemble member waits for its
	// peers only in the cluster-wide WaitServing below.
	errs := make([]error, cfg.Servers)
	var wg sync.WaitGroup
	for i := range cfg.Servers {
		wg.Go(func() { errs[i] = b.create(ctx, t, i, image) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("zktest/containers: start: %v%s", err, b.tails())
	}
	c := &Cluster{Cluster: zktest.NewCluster("containers", servers, b, opts...), b: b}
	if err := c.WaitServing(ctx); err != nil {
		t.Fatalf("zktest/containers: ensemble did not serve: %v%s", err, b.tails())
	}
	version, err := c.ServerVersion(0)
	if err != nil {
		version = "of unknown version (" + err.Error() + ")"
	}
	t.Logf("zktest/containers: ZooKeeper %s, image %s, %d server(s) at %s", version, image, cfg.Servers, c.ConnectString())
	return c
}

// PullTimeout bounds Start's pull of an image that EnvImage names.
const PullTimeout = 10 * time.Minute

// ensureImage checks that the engine has image, or pulls it if EnvImage
// named it (one attempt, within PullTimeout).
func ensureImage(p *testcontainers.DockerProvider, image string, t testing.TB) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), PullTimeout)
	defer cancel()
	_, err := p.Client().ImageInspect(ctx, image)
	if err == nil {
		return nil
	}
	if os.Getenv(EnvImage) == "" {
		return fmt.Errorf("%w: %s (%v); zklock's scripts/zk-image.sh builds it, or set %s to an image with the official zookeeper image's layout (%s=zookeeper:3.9), which is pulled", ErrNoImage, image, err, EnvImage, EnvImage)
	}
	began := time.Now()
	var opts client.ImagePullOptions
	if _, auth, err := testcontainers.DockerImageAuth(ctx, image); err == nil {
		if enc, err := authconfig.Encode(auth); err == nil {
			opts.RegistryAuth = enc
		}
	}
	pull, err := p.Client().ImagePull(ctx, image, opts)
	if err == nil {
		err = pull.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("%w: %s, and its pull failed: %v", ErrNoImage, image, err)
	}
	t.Logf("zktest/containers: pulled %s in %v", image, time.Since(began).Round(time.Millisecond))
	return nil
}

// Image returns the image members run: $ZKTEST_IMAGE, or ImageRepo tagged
// with the release zktest.SelectedVersion names; an unknown
// ZKTEST_ZK_VERSION is an error.
func Image() (string, error) {
	if s := os.Getenv(EnvImage); s != "" {
		return s, nil
	}
	v, err := zktest.SelectedVersion()
	if err != nil {
		return "", err
	}
	return ImageRepo + ":" + v, nil
}

// Engine connects to the Docker engine (DOCKER_HOST or the default socket)
// and checks that it answers; the error, one line, says what is wrong. A
// DOCKER_HOST that is set is the engine: if it does not answer, Engine
// fails, where testcontainers-go alone would fall back to the default
// socket. The caller closes the provider.
func Engine(ctx context.Context, opts ...testcontainers.DockerProviderOption) (*testcontainers.DockerProvider, error) {
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if host := os.Getenv("DOCKER_HOST"); host != "" {
		if err := ping(hctx, host); err != nil {
			return nil, noEngine("DOCKER_HOST="+host, err)
		}
	}
	p, err := testcontainers.NewDockerProvider(opts...)
	if err != nil {
		return nil, noEngine("", err)
	}
	if _, err := p.Client().Ping(hctx, client.PingOptions{}); err != nil {
		p.Close()
		return nil, noEngine(p.Client().DaemonHost(), err)
	}
	return p, nil
}

// ping checks that the engine at host (a DOCKER_HOST URL) answers.
func ping(ctx context.Context, host string) error {
	c, err := client.New(client.FromEnv, client.WithHost(host))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Ping(ctx, client.PingOptions{})
	return err
}

// noEngine is Engine's error: one line, naming the engine tried (at, if
// known) and why it did not answer.
func noEngine(at string, err error) error {
	if at != "" {
		at = " at " + at
	}
	reason := strings.Join(strings.Fields(err.Error()), " ")
	return fmt.Errorf("no Docker engine answers%s (start dockerd or set DOCKER_HOST): %s", at, reason)
}

// engineDown is why no engine answered the first Start of this test
// binary, if none did: later Starts skip at once with the same reason
// instead of asking again (an engine that does not answer rarely starts
// answering within one test run, and a DOCKER_HOST that drops packets
// would cost every test the 10s bound).
var engineDown struct {
	sync.Mutex
	err error
}

// engineFor is Engine for Start, with testcontainers' log on t.
func engineFor(ctx context.Context, t testing.TB) (*testcontainers.DockerProvider, error) {
	engineDown.Lock()
	defer engineDown.Unlock()
	if engineDown.err != nil {
		return nil, engineDown.err
	}
	p, err := Engine(ctx, testcontainers.WithLogger(tclog.TestLogger(t)))
	engineDown.err = err
	return p, err
}

// createNetwork makes the cluster's bridge network on a random 10.x.y.0/24
// subnet (so members can have fixed addresses), retrying on overlaps.
func (b *backend) createNetwork(ctx context.Context, t testing.TB) error {
	var last error
	for range 20 {
		prefix := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(160 + rand.IntN(64)), byte(rand.IntN(256)), 0}), 24)
		gw := prefix.Addr().Next()
		nw, err := tcnetwork.New(ctx,
			tcnetwork.WithLabels(ownerLabels()),
			tcnetwork.WithIPAM(&network.IPAM{Driver: "default", Config: []network.IPAMConfig{{Subnet: prefix, Gateway: gw}}}))
		if err != nil {
			last = err
			if strings.Contains(err.Error(), "overlap") || strings.Contains(err.Error(), "in use") {
				continue
			}
			return fmt.Errorf("zktest/containers: create network: %w", err)
		}
		b.net, b.gateway = nw, gw
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := nw.Remove(ctx); err != nil {
				t.Errorf("zktest/containers: cleanup: remove network %s: %v", nw.Name, err)
			}
		})
		return nil
	}
	return fmt.Errorf("zktest/containers: no free subnet for the cluster's network: %w", last)
}

// memberIP is member i's fixed address: .10, .11, ... of the subnet.
func (b *backend) memberIP(i int) netip.Addr {
	a := b.gateway.As4()
	a[3] = byte(10 + i)
	return netip.AddrFrom4(a)
}

// zooCfg is the members' /conf/zoo.cfg; their myid (ZOO_MY_ID) tells them
// apart.
func (b *backend) zooCfg() string {
	cfg := b.cfg
	tickMs := max(int(cfg.Tick/time.Millisecond), 1)
	forceSync := "no"
	if cfg.Fsync {
		forceSync = "yes"
	}
	var s strings.Builder
	fmt.Fprintf(&s, "tickTime=%d\ninitLimit=%d\nsyncLimit=%d\n", tickMs, cfg.InitLimit, cfg.SyncLimit)
	fmt.Fprintf(&s, "dataDir=/data\nclientPort=%d\n", ClientPort)
	fmt.Fprintf(&s, "minSessionTimeout=%d\nmaxSessionTimeout=60000\n", 2*tickMs)
	fmt.Fprintf(&s, "forceSync=%s\npreAllocSize=4096\nmaxClientCnxns=0\n", forceSync)
	s.WriteString("4lw.commands.whitelist=*\nadmin.enableServer=false\n")
	if len(b.members) > 1 {
		s.WriteString("reconfigEnabled=false\n")
		for j, m := range b.members {
			fmt.Fprintf(&s, "server.%d=%s:2888:3888\n", j+1, m.ip)
		}
	}
	return s.String()
}

// zooServers is ZOO_SERVERS: the ensemble's server lines, as the official
// image's entrypoint would write them.
func (b *backend) zooServers() string {
	var s []string
	for j, m := range b.members {
		s = append(s, fmt.Sprintf("server.%d=%s:2888:3888;%d", j+1, m.ip, ClientPort))
	}
	return strings.Join(s, " ")
}

func (b *backend) jvmFlags() string { return strings.Join(zktest.JVMArgs(b.cfg, nil), " ") }

// fourLetterCmd runs a four-letter word against the member's own loopback,
// from inside its container (so it works whatever the partition). It gives
// up after 2s: a server still loading its database may never close the
// socket of an early command.
func fourLetterCmd(word string) []string {
	return []string{"timeout", "2", "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/2181 && printf " + word + " >&3 && cat <&3"}
}

// create creates and starts member i's container; it is ready once the
// server answers ruok (and, standalone, reports a Mode in srvr).
func (b *backend) create(ctx context.Context, t testing.TB, i int, image string) error {
	m := b.members[i]
	ready := wait.ForAll(wait.ForExec(fourLetterCmd("ruok")).
		WithResponseMatcher(func(r io.Reader) bool { return contains(r, "imok") }).
		WithPollInterval(100 * time.Millisecond))
	if len(b.members) == 1 {
		ready = wait.ForAll(ready, srvrReady{})
	}
	ready = ready.WithDeadline(b.cfg.StartTimeout)
	labels := ownerLabels()
	labels[labelMember] = strconv.Itoa(i + 1)
	req := testcontainers.ContainerRequest{
		Image:           image,
		AlwaysPullImage: false, // the image is local (see ensureImage)
		Name:            fmt.Sprintf("zktest-%d-%s-zk%d", os.Getpid(), b.net.Name[:8], i+1),
		// The official image's contract: its entrypoint keeps a
		// /conf/zoo.cfg that exists (ZOO_SERVERS is for one that would
		// write its own), writes /data/myid from ZOO_MY_ID, and runs
		// zkServer.sh start-foreground, which passes JVMFLAGS to java.
		Files: []testcontainers.ContainerFile{{Reader: strings.NewReader(b.zooCfg()), ContainerFilePath: "/conf/zoo.cfg", FileMode: 0o644}},
		Env: map[string]string{
			"ZOO_MY_ID":   strconv.Itoa(i + 1),
			"ZOO_SERVERS": b.zooServers(),
			"JVMFLAGS":    b.jvmFlags(),
		},
		Labels:         labels,
		Networks:       []string{b.net.Name},
		NetworkAliases: map[string][]string{b.net.Name: {fmt.Sprintf("zk%d", i+1)}},
		EndpointSettingsModifier: func(eps map[string]*network.EndpointSettings) {
			if ep := eps[b.net.Name]; ep != nil {
				ep.IPAMConfig = &network.EndpointIPAMConfig{IPv4Address: m.ip}
			}
		},
		// Only the client port is published, and on loopback only
		// (testcontainers would publish the image's EXPOSEd ports on every
		// interface); the cluster's clients use the container addresses.
		ExposedPorts: []string{"2181/tcp"},
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.CapAdd = append(hc.CapAdd, "NET_ADMIN") // iptables for Partition
			hc.PublishAllPorts = false
			hc.PortBindings = network.PortMap{network.MustParsePort("2181/tcp"): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: "0"}}}
		},
		WaitingFor:     ready,
		LogConsumerCfg: &testcontainers.LogConsumerConfig{Consumers: []testcontainers.LogConsumer{m.logs}},
		LifecycleHooks: []testcontainers.ContainerLifecycleHooks{{
			// A restarted container has a fresh network namespace: put the
			// current partition back before the server talks to anyone.
			PostStarts: []testcontainers.ContainerHook{func(ctx context.Context, c testcontainers.Container) error {
				return b.applyRules(ctx, i, c, true)
			}},
		}},
	}
	ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true,
		Logger: tclog.TestLogger(t)})
	if ctr != nil {
		m.ctr = ctr
		t.Cleanup(func() {
			if err := testcontainers.TerminateContainer(ctr, testcontainers.StopTimeout(0), testcontainers.RemoveVolumes()); err != nil {
				t.Errorf("zktest/containers: cleanup: %v", err)
			}
		})
	}
	if err != nil {
		return fmt.Errorf("member %d: %w", i, err)
	}
	m.running = true
	return nil
}

func (b *backend) tails() string {
	var s strings.Builder
	for i, m := range b.members {
		if tail := m.logs.Tail(); tail != "" {
			fmt.Fprintf(&s, "\n--- zk%d log tail ---\n%s", i+1, tail)
		}
	}
	return s.String()
}

// Container returns member i's testcontainers container (nil if out of
// range), for anything this package does not wrap.
func (c *Cluster) Container(i int) testcontainers.Container {
	if i < 0 || i >= len(c.b.members) {
		return nil
	}
	return c.b.members[i].ctr
}

// Network returns the name of the cluster's private Docker network.
func (c *Cluster) Network() string { return c.b.net.Name }

// FourLetterInside sends a four-letter word to member i from inside its
// container (its own loopback), so it answers even while Partition cuts
// the member off from the test process. It fails for a stopped or paused
// member, or after 5s.
func (c *Cluster) FourLetterInside(i int, word string) (string, error) {
	if i < 0 || i >= len(c.b.members) {
		return "", fmt.Errorf("zktest/containers: server index %d out of range [0,%d)", i, len(c.b.members))
	}
	if len(word) != 4 || strings.Trim(word, "abcdefghijklmnopqrstuvwxyz") != "" {
		return "", fmt.Errorf("zktest/containers: four-letter command %q is not 4 lowercase letters", word)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	code, out, err := c.b.members[i].ctr.Exec(ctx, fourLetterCmd(word), tcexec.Multiplexed())
	if err != nil {
		return "", fmt.Errorf("zktest/containers: %s inside zk%d: %w", word, i+1, err)
	}
	body := readAll(out)
	if code != 0 {
		return body, fmt.Errorf("zktest/containers: %s inside zk%d: exit %d: %s", word, i+1, code, strings.TrimSpace(body))
	}
	return body, nil
}

// Mode returns member i's Mode from srvr (leader, follower, standalone),
// asked from inside its container; an error quotes a non-serving answer.
func (c *Cluster) Mode(i int) (string, error) {
	out, err := c.FourLetterInside(i, "srvr")
	if err != nil {
		return "", err
	}
	if m, ok := modeOf(out); ok {
		return m, nil
	}
	return "", fmt.Errorf("zktest/containers: zk%d not serving: %q", i+1, strings.TrimSpace(out))
}

func modeOf(srvr string) (string, bool) {
	for _, line := range strings.Split(srvr, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), true
		}
	}
	return "", false
}
