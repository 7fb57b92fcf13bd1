package deploytest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	zkImage     = "zklock/zookeeper:3.9" // scripts/zk-image.sh
	electPath   = "/deploytest/jobs"
	stopEvents  = 10 // docker stop of the leader
	killEvents  = 2  // docker kill of the leader
	sampleEvery = 100 * time.Millisecond

	// sessionTimeout is what the members ask for; the server's tickTime
	// (2s, the image's default) makes it the least it grants.
	sessionTimeout = 4 * time.Second
	tickTime       = 2 * time.Second

	// stopBound: the next leader after docker stop of the leader, p50.
	stopBound = 200 * time.Millisecond
	// killBound: after docker kill, the session expires (the server checks
	// expiry once a tick) and the next member is elected.
	killBound = sessionTimeout + tickTime + time.Second
)

// deployment is a ZooKeeper container and three zklock containers of the
// image under test, on a Docker network of their own.
type deployment struct {
	t       *testing.T
	id      string
	image   string
	network string
	zk      string
	members []*member
	engine  *engine
	client  *http.Client // keeps connections to the published ports
}

// buildImage builds the image from make dist's linux/amd64 binary, under a
// tag of this run that cleanup removes.
func buildImage(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	bin := filepath.Join(distDir, "zklock-linux-amd64")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s (%v): run make dist first (make deploy-test does)", bin, err)
	}
	tag := "zklock/zklock:deploytest-" + id
	t.Cleanup(func() { _, _ = docker(context.Background(), "rmi", "-f", tag) })
	began := time.Now()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "image.sh"), "--tag", tag)
	cmd.Env = append(os.Environ(), "BIN="+mustAbs(t, bin))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "scripts/image.sh: %s", out)
	t.Logf("image %s built in %v", tag, time.Since(began).Round(time.Millisecond))
	return tag
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}

// start creates the network and ZooKeeper, waits for it to serve, then
// starts the members.
func (d *deployment) start(ctx context.Context) {
	t := d.t
	label := "org.zklock.deploytest=" + d.id
	d.network = "zklock-deploytest-" + d.id
	mustDocker(t, ctx, "network", "create", "--label", label, d.network)
	t.Cleanup(func() { _, _ = docker(context.Background(), "network", "rm", d.network) })

	d.zk = "zklock-deploytest-zk-" + d.id
	t.Cleanup(func() { d.remove(d.zk) })
	mustDocker(t, ctx, "run", "-d", "--name", d.zk, "--network", d.network, "--label", label,
		"-e", "ZOO_4LW_COMMANDS_WHITELIST=ruok,srvr", "-e", fmt.Sprintf("ZOO_TICK_TIME=%d", tickTime.Milliseconds()), zkImage)
	require.Eventually(t, func() bool {
		out, _ := docker(ctx, "exec", d.zk, "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/2181 && printf ruok >&3 && timeout 2 cat <&3")
		return out == "imok"
	}, 90*time.Second, 250*time.Millisecond, "ZooKeeper in %s answers ruok", d.zk)

	for i := range 3 {
		m := &member{name: fmt.Sprintf("zklock-deploytest-%s-%d", d.id, i+1)}
		d.members = append(d.members, m)
		t.Cleanup(func() {
			if t.Failed() {
				logs, _ := exec.Command("docker", "logs", "--tail", "40", m.name).CombinedOutput()
				t.Logf("docker logs %s:\n%s", m.name, logs)
			}
			d.remove(m.name)
		})
		mustDocker(t, ctx, "run", "-d", "--name", m.name, "--network", d.network, "--label", label,
			"-p", "127.0.0.1::8080", d.image,
			"--servers", d.zk+":2181", "--session-timeout", sessionTimeout.String(), "--log-level", "info",
			"elect", "--id", fmt.Sprintf("member-%d", i+1), "--requeue",
			"--http", "0.0.0.0:8080", "--insecure-listen", electPath, "--", "sleep", "infinity")
		require.NoError(t, m.refresh(ctx))
	}
}

func (d *deployment) remove(name string) {
	_, _ = docker(context.Background(), "rm", "-f", "-v", name)
}

// leaders asks every member's /leader at once and returns the members
// that answered 200, and whether every member answered (or is not
// serving: stopped, killed, starting).
func (d *deployment) leaders(ctx context.Context) (out []*member, complete bool) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	complete = true
	for _, m := range d.members {
		wg.Go(func() {
			code, err := m.get(ctx, d.client, "/leader")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && code == http.StatusOK:
				out = append(out, m)
			case err != nil && !notServing(err):
				complete = false
			}
		})
	}
	wg.Wait()
	return out, complete
}

// oneLeader waits until exactly one member leads and every member's
// session is usable (/healthz 200: all three take part), and returns the
// leader.
func (d *deployment) oneLeader(ctx context.Context, within time.Duration) *member {
	var leader *member
	require.Eventually(d.t, func() bool {
		for _, m := range d.members {
			if code, err := m.get(ctx, d.client, "/healthz"); err != nil || code != http.StatusOK {
				return false
			}
		}
		l, _ := d.leaders(ctx)
		if len(l) != 1 {
			return false
		}
		leader = l[0]
		return true
	}, within, 20*time.Millisecond, "one leader, every member's session usable")
	return leader
}

// handover ends the leader with end (the engine's stop or kill) and
// returns how long after the request the next member's /leader answered
// 200, and how long no member led (from the old leader's last 200).
func (d *deployment) handover(ctx context.Context, leader *member, end func(context.Context, string) error,
	within time.Duration) (took, gap time.Duration) {
	t := d.t
	var others []*member
	for _, m := range d.members {
		if m != leader {
			others = append(others, m)
		}
	}
	lastLed := time.Now()
	ended := make(chan error, 1)
	began := time.Now()
	go func() { ended <- end(ctx, leader.name) }()
	deadline := began.Add(within + 10*time.Second)
	poll := time.NewTicker(2 * time.Millisecond)
	defer poll.Stop()
	for ; ; <-poll.C {
		now := time.Now()
		if now.After(deadline) {
			t.Fatalf("no leader %v after ending %s", now.Sub(began), leader.name)
		}
		var wg sync.WaitGroup
		var next *member
		var mu sync.Mutex
		for _, m := range others {
			wg.Go(func() {
				if code, err := m.get(ctx, d.client, "/leader"); err == nil && code == http.StatusOK {
					mu.Lock()
					next = m
					mu.Unlock()
				}
			})
		}
		wg.Go(func() {
			if code, err := leader.get(ctx, d.client, "/leader"); err == nil && code == http.StatusOK {
				mu.Lock()
				lastLed = time.Now()
				mu.Unlock()
			}
		})
		wg.Wait()
		if next != nil {
			at := time.Now()
			took, gap = at.Sub(began), at.Sub(lastLed)
			break
		}
	}
	require.NoError(t, <-ended, "ending %s", leader.name)
	leader.down()
	// Back as a member, for the next event.
	mustDocker(t, ctx, "start", leader.name)
	require.NoError(t, leader.refresh(ctx))
	return took, gap
}

// sample is one look at every member's /leader.
type sample struct {
	at       time.Time
	leaders  []string
	complete bool   // every member answered, or was not serving
	phase    string // "stop" or "kill": the events under way
}

// sampler asks every member's /leader every 100ms until stop, and keeps
// what it saw.
type sampler struct {
	mu      sync.Mutex
	phase   string
	samples []sample
}

func (s *sampler) setPhase(p string) {
	s.mu.Lock()
	s.phase = p
	s.mu.Unlock()
}

func (s *sampler) run(ctx context.Context, d *deployment, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		at := time.Now()
		leaders, complete := d.leaders(ctx)
		var names []string
		for _, m := range leaders {
			names = append(names, m.name)
		}
		slices.Sort(names)
		s.mu.Lock()
		s.samples = append(s.samples, sample{at: at, leaders: names, complete: complete, phase: s.phase})
		s.mu.Unlock()
	}
}

// percentile is the q-quantile of ds (nearest rank).
func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(q*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

// TestIntegration_Deployed runs the image as deployed: three `zklock elect`
// containers against ZooKeeper in a container, the leader stopped (docker
// stop: SIGTERM) ten times and killed (docker kill: SIGKILL) twice.
//   - docker stop of the leader: the next leader's /leader answers 200
//     within 200ms of the stop request (p50 of 10);
//   - docker kill of the leader: within the session timeout, a tick of the
//     server's expiry and the election;
//   - docker inspect reports the leader healthy (the image's HEALTHCHECK);
//   - sampled every 100ms throughout, /leader answers 200 on one member at
//     most (a short gap with none is allowed, two never).
func TestIntegration_Deployed(t *testing.T) {
	engineAnswers(t)
	needDist(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if _, err := docker(ctx, "image", "inspect", zkImage); err != nil {
		t.Fatalf("no %s on the engine: run scripts/zk-image.sh (make zk-image): %v", zkImage, err)
	}
	id := runID(t)
	d := &deployment{t: t, id: id, engine: newEngine(),
		client: &http.Client{Timeout: time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	d.image = buildImage(t, ctx, id)

	// The image: a non-root user, entrypoint zklock, a HEALTHCHECK.
	cfg := mustDocker(t, ctx, "image", "inspect", "--format", "{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Healthcheck.Test}}", d.image)
	parts := strings.SplitN(cfg, "|", 3)
	require.Len(t, parts, 3, cfg)
	require.NotContains(t, []string{"", "root", "0", "0:0", "root:root"}, parts[0], "the image runs as a non-root user")
	require.Equal(t, `["zklock"]`, parts[1])
	require.Contains(t, parts[2], "/healthz")
	require.Regexp(t, `^uid=[1-9][0-9]*\(`, mustDocker(t, ctx, "run", "--rm", "--entrypoint", "id", d.image))

	began := time.Now()
	d.start(ctx)
	leader := d.oneLeader(ctx, 60*time.Second)
	t.Logf("deployed: ZooKeeper and 3 members up, %s leads, in %v", leader.name, time.Since(began).Round(time.Millisecond))

	// docker inspect: the leader is healthy (HEALTHCHECK every 5s).
	healthy := func(m *member) {
		var last string
		var err error
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); <-tick.C {
			if last, err = docker(ctx, "inspect", "--format", "{{.State.Health.Status}}", m.name); last == "healthy" {
				break
			}
		}
		require.Equal(t, "healthy", last, "docker inspect: %s's health after 30s (%v)", m.name, err)
	}
	healthy(leader)

	s := &sampler{phase: "stop"}
	sctx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go s.run(sctx, d, sampled)
	defer func() { stopSampling(); <-sampled }()

	var stops, stopGaps []time.Duration
	for i := range stopEvents {
		took, gap := d.handover(ctx, leader, d.engine.stop, stopBound)
		stops, stopGaps = append(stops, took), append(stopGaps, gap)
		t.Logf("docker stop %d: %s -> next leader in %s (no leader for %s)", i+1, leader.name, ms(took), ms(gap))
		leader = d.oneLeader(ctx, 30*time.Second)
	}
	s.setPhase("kill")
	var kills []time.Duration
	for i := range killEvents {
		took, _ := d.handover(ctx, leader, d.engine.kill, killBound)
		kills = append(kills, took)
		t.Logf("docker kill %d: %s -> next leader in %s", i+1, leader.name, ms(took))
		leader = d.oneLeader(ctx, 30*time.Second)
	}
	healthy(leader)
	stopSampling()
	<-sampled

	t.Logf("docker stop -> next leader, %d events: p50 %s, p90 %s, max %s (no leader: p50 %s, max %s)",
		len(stops), ms(percentile(stops, 0.5)), ms(percentile(stops, 0.9)), ms(slices.Max(stops)),
		ms(percentile(stopGaps, 0.5)), ms(slices.Max(stopGaps)))
	t.Logf("docker kill -> next leader, %d events: %s (bound: session timeout %v + tick %v + 1s election = %v)",
		len(kills), strings.Join(mapDur(kills), ", "), sessionTimeout, tickTime, killBound)
	assert.Less(t, percentile(stops, 0.5), stopBound, "docker stop: p50 of the next leader")
	assert.Less(t, slices.Max(kills), killBound, "docker kill: the next leader within the session timeout and the election")

	// /leader every 100ms: never two; a run of samples with none no longer
	// than a handover.
	s.mu.Lock()
	samples := slices.Clone(s.samples)
	s.mu.Unlock()
	require.NotEmpty(t, samples)
	runs := map[string]int{}
	none, run, partial := 0, 0, 0
	for _, sm := range samples {
		require.LessOrEqual(t, len(sm.leaders), 1, "sample at %s: /leader 200 on %v", sm.at.Format(time.StampMicro), sm.leaders)
		switch {
		case len(sm.leaders) == 0 && !sm.complete:
			partial++ // a member did not answer in time: it may have led
		case len(sm.leaders) == 0:
			none++
			run++
			runs[sm.phase] = max(runs[sm.phase], run)
		default:
			run = 0
		}
	}
	t.Logf("/leader sampled every %v: %d samples, %d with no leader, %d without every answer and no leader, never two;"+
		" longest run with none: %d during docker stop, %d during docker kill",
		sampleEvery, len(samples), none, partial, runs["stop"], runs["kill"])
	assert.Less(t, partial, len(samples)/10, "samples that could not ask every member")
	assert.LessOrEqual(t, runs["stop"], 3, "samples in a row with no leader around docker stop (100ms apart)")
	assert.LessOrEqual(t, runs["kill"], int(killBound/sampleEvery)+2, "samples in a row with no leader around docker kill")
}

func mapDur(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}
