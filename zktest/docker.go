//go:build zktest_docker

package zktest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The docker backend (ZKTEST_BACKEND=docker, build tag zktest_docker) runs
// one container of the official zookeeper image per Cluster, with its
// client port published on a fixed 127.0.0.1 port so that restarts keep
// the address. It drives the engine through the docker CLI rather than
// testcontainers-go: adding testcontainers-go to this library's go.mod
// pulled in about 48 modules (the Docker client, OpenTelemetry, x/crypto)
// and upgraded shared test dependencies, for a backend our own machines
// cannot run; the CLI needs nothing but a Docker engine.
//
// Only standalone servers are supported (WithServers(n>1) skips the test).
// Kill, Stop, Start, Restart, Pause and Resume map to docker kill, stop,
// start and pause/unpause; WithLogOutput is not forwarded (use docker
// logs). ZKTEST_DOCKER_IMAGE overrides the image (default zookeeper:3.8).

const envDockerImage = "ZKTEST_DOCKER_IMAGE"

type dockerBackend struct {
	container string // container name
}

func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("zktest: docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

func startDocker(t testing.TB, cfg config) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Skipf("zktest: %s=docker but the docker CLI is missing: %v", EnvBackend, err)
	}
	if _, err := docker(ctx, "info", "--format", "{{.ServerVersion}}"); err != nil {
		t.Skipf("zktest: %s=docker but no Docker engine answers: %v", EnvBackend, err)
	}
	if cfg.servers != 1 {
		t.Skipf("zktest: the docker backend runs standalone servers only (asked for %d)", cfg.servers)
	}
	reapContainers()
	image := os.Getenv(envDockerImage)
	if image == "" {
		image = "zookeeper:3.8"
	}
	tickMs := max(int(cfg.tick/time.Millisecond), 1)
	forceSync := "no"
	if cfg.fsync {
		forceSync = "yes"
	}
	jvm := fmt.Sprintf("-Xmx%s -XX:+UseSerialGC -Dznode.container.checkIntervalMs=%d -Dzookeeper.extendedTypesEnabled=true",
		cfg.heap, max(int(cfg.containerCheck/time.Millisecond), 1))
	for k, v := range cfg.props {
		jvm += " -D" + k + "=" + v
	}
	var c *Cluster
	for attempt := 1; c == nil; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			t.Fatal(err)
		}
		b := &dockerBackend{container: fmt.Sprintf("zktest-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), attempt)}
		runCtx, cancel := context.WithTimeout(context.Background(), cfg.startTimeout)
		_, err = docker(runCtx, "run", "-d", "--name", b.container,
			"--label", "zktest.owner="+strconv.Itoa(os.Getpid()),
			"--label", "zktest.ownerstart="+procStart(os.Getpid()),
			"-p", fmt.Sprintf("127.0.0.1:%d:2181", ports[0]),
			"-e", "ZOO_TICK_TIME="+strconv.Itoa(tickMs),
			"-e", "ZOO_4LW_COMMANDS_WHITELIST=*",
			"-e", "ZOO_ADMINSERVER_ENABLED=false",
			"-e", fmt.Sprintf("ZOO_CFG_EXTRA=minSessionTimeout=%d maxSessionTimeout=60000 forceSync=%s", 2*tickMs, forceSync),
			"-e", "JVMFLAGS="+jvm,
			image)
		cancel()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := docker(ctx, "rm", "-f", "-v", b.container); err != nil {
				t.Errorf("zktest: cleanup: %v", err)
			}
		})
		if err != nil {
			if strings.Contains(err.Error(), "address already in use") && attempt < 3 {
				continue
			}
			t.Fatal(err)
		}
		c = &Cluster{cfg: cfg, servers: []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))},
			book: newSessionBook(), ctl: b, backend: "docker"}
	}
	wctx, wcancel := context.WithTimeout(context.Background(), cfg.startTimeout)
	defer wcancel()
	if err := c.WaitServing(wctx); err != nil {
		t.Fatalf("zktest: docker ZooKeeper did not serve: %v", err)
	}
	return c
}

// reapContainers removes zktest containers whose owning test binary exited.
func reapContainers() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := docker(ctx, "ps", "-a", "--filter", "label=zktest.owner",
		"--format", `{{.Names}} {{.Label "zktest.owner"}} {{.Label "zktest.ownerstart"}}`)
	if err != nil {
		return
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		if pid, err := strconv.Atoi(f[1]); err == nil && procStart(pid) == f[2] {
			continue // owner alive
		}
		_, _ = docker(ctx, "rm", "-f", "-v", f[0])
	}
}

func (b *dockerBackend) run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := docker(ctx, append(args, b.container)...)
	return err
}

func (b *dockerBackend) state() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := docker(ctx, "inspect", "--format", "{{.State.Status}}", b.container)
	return out
}

func (b *dockerBackend) kill(int) error { return b.requireRunning("kill") }
func (b *dockerBackend) stop(int) error { return b.requireRunning("stop", "-t", "10") }
func (b *dockerBackend) pause(int) error {
	if b.state() == "paused" {
		return nil
	}
	return b.requireRunning("pause")
}

func (b *dockerBackend) resume(int) error {
	if b.state() != "paused" {
		return nil
	}
	return b.run("unpause")
}

func (b *dockerBackend) requireRunning(args ...string) error {
	if s := b.state(); s != "running" && s != "paused" {
		return fmt.Errorf("%w (container %s is %s)", ErrNotRunning, b.container, s)
	}
	if args[0] != "pause" && b.state() == "paused" {
		_ = b.run("unpause")
	}
	return b.run(args...)
}

func (b *dockerBackend) start(int) error {
	if s := b.state(); s == "running" || s == "paused" {
		return fmt.Errorf("zktest: server 0 is already running")
	}
	return b.run("start")
}

func (b *dockerBackend) live(int) bool { return b.state() == "running" }
