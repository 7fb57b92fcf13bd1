package containers

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/client"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/wait"
	"github.com/zklock/zklock/zktest"
)

// The zktest.Controller of the containers: NewCluster maps Cluster.Kill,
// Stop, Start, Pause and Resume onto these.

const faultTimeout = 60 * time.Second

func (b *backend) id(i int) string { return b.members[i].ctr.GetContainerID() }

func (b *backend) notRunning(i int) error {
	return fmt.Errorf("%w (container zk%d is stopped)", zktest.ErrNotRunning, i+1)
}

// onRunning runs f on running member i under its lock, bounded by
// faultTimeout; a stopped member is zktest.ErrNotRunning.
func (b *backend) onRunning(i int, f func(ctx context.Context, m *member) error) error {
	m := b.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.running {
		return b.notRunning(i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	return f(ctx, m)
}

// unpauseLocked resumes a paused member, so it can be killed or stopped.
func (b *backend) unpauseLocked(ctx context.Context, i int) error {
	return b.setPausedLocked(ctx, i, false)
}

// setPausedLocked pauses (docker pause) or unpauses member i, if it is not
// so already. The caller holds its lock.
func (b *backend) setPausedLocked(ctx context.Context, i int, paused bool) error {
	m := b.members[i]
	if m.paused == paused {
		return nil
	}
	cli, verb := b.provider.Client(), "unpause"
	var err error
	if paused {
		verb = "pause"
		_, err = cli.ContainerPause(ctx, b.id(i), client.ContainerPauseOptions{})
	} else {
		_, err = cli.ContainerUnpause(ctx, b.id(i), client.ContainerUnpauseOptions{})
	}
	if err != nil {
		return fmt.Errorf("zktest/containers: %s zk%d: %w", verb, i+1, err)
	}
	m.paused = paused
	return nil
}

// Kill implements zktest.Controller: SIGKILL, then wait until the
// container is no longer running.
func (b *backend) Kill(i int) error {
	return b.halt(i, func(ctx context.Context, m *member) error {
		if _, err := b.provider.Client().ContainerKill(ctx, b.id(i), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
			return fmt.Errorf("zktest/containers: kill zk%d: %w", i+1, err)
		}
		for {
			st, err := m.ctr.State(ctx)
			if err != nil {
				return fmt.Errorf("zktest/containers: kill zk%d: %w", i+1, err)
			}
			if !st.Running {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("zktest/containers: zk%d still running after SIGKILL: %w", i+1, ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	})
}

// Stop implements zktest.Controller: docker stop (SIGTERM, SIGKILL after
// 10s).
func (b *backend) Stop(i int) error {
	return b.halt(i, func(ctx context.Context, m *member) error {
		grace := 10 * time.Second
		if err := m.ctr.Stop(ctx, &grace); err != nil {
			return fmt.Errorf("zktest/containers: stop zk%d: %w", i+1, err)
		}
		return nil
	})
}

// halt unpauses running member i, then ends it with end; the member is
// stopped once end returns nil.
func (b *backend) halt(i int, end func(ctx context.Context, m *member) error) error {
	return b.onRunning(i, func(ctx context.Context, m *member) error {
		if err := b.unpauseLocked(ctx, i); err != nil {
			return err
		}
		if err := end(ctx, m); err != nil {
			return err
		}
		m.running = false
		return nil
	})
}

// Start implements zktest.Controller: docker start, running the
// container's lifecycle hooks (the partition is re-applied) and its wait
// strategy (ruok). The cluster-wide wait is zktest.Cluster.Start's.
func (b *backend) Start(i int) error {
	m := b.members[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.running {
		return fmt.Errorf("zktest/containers: server %d is already running", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.StartTimeout)
	defer cancel()
	if err := m.ctr.Start(ctx); err != nil {
		st, _ := m.ctr.State(ctx)
		if st != nil && st.Running {
			m.running = true
		}
		return fmt.Errorf("zktest/containers: start zk%d: %w%s", i+1, err, "\n"+m.logs.Tail())
	}
	m.running = true
	return nil
}

// Pause implements zktest.Controller: the cgroup freezer (docker pause).
func (b *backend) Pause(i int) error {
	return b.onRunning(i, func(ctx context.Context, _ *member) error { return b.setPausedLocked(ctx, i, true) })
}

// Resume implements zktest.Controller (docker unpause).
func (b *backend) Resume(i int) error {
	return b.onRunning(i, func(ctx context.Context, _ *member) error { return b.unpauseLocked(ctx, i) })
}

// Live implements zktest.Controller: started, not paused, and not cut
// off from the test process by Partition (so WaitServing, Leader and
// Expire only ask members that can answer).
func (b *backend) Live(i int) bool {
	m := b.members[i]
	m.mu.Lock()
	up := m.running && !m.paused
	m.mu.Unlock()
	return up && b.hostReaches(i)
}

// srvrReady is a wait strategy: the server reports a Mode in srvr, i.e.
// it serves clients.
type srvrReady struct{}

func (srvrReady) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	for {
		_, out, err := target.Exec(ctx, fourLetterCmd("srvr"), tcexecMultiplexed)
		if err == nil {
			if _, ok := modeOf(readAll(out)); ok {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("srvr: no Mode: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func readAll(r io.Reader) string {
	if r == nil {
		return ""
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

func contains(r io.Reader, s string) bool { return strings.Contains(readAll(r), s) }

var tcexecMultiplexed = tcexec.Multiplexed()
