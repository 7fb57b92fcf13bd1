package main

// elect --health-cmd: leadership gated on a command's exit status
// (zklock.WithHealthCheck). The library gates the campaign (no campaign
// while the check fails; a standby leaves the queue after --health-failures
// failures in a row); zklock itself watches the term, because the node must
// outlive CMD: after --health-failures failures in a row CMD is stopped as
// on a loss (SIGTERM, SIGKILL after --kill-grace), and only then is the node
// deleted; zklock then cools off and campaigns again (as --requeue does).

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/zklock/zklock"
)

// healthOpts are elect's --health-* flags.
type healthOpts struct {
	cmd      string        // --health-cmd: run with /bin/sh -c; exit 0 is healthy
	interval time.Duration // --health-interval
	failures int           // --health-failures

	check *zklock.HealthCheck // built from the above by runElect (healthCheck)
}

func registerHealthFlags(fs *flag.FlagSet, o *verbOpts) {
	fs.StringVar(&o.health.cmd, "health-cmd", "", "campaign only while `CMD` (run with /bin/sh -c every --health-interval)\n"+
		"exits 0; a leader whose CMD fails --health-failures times in a row resigns,\n"+
		"cools off one interval and campaigns again")
	fs.DurationVar(&o.health.interval, "health-interval", 10*time.Second, "with --health-cmd: run it every `DUR` (each run bounded by DUR)")
	fs.IntVar(&o.health.failures, "health-failures", 3, "with --health-cmd: resign after `K` failures in a row")
}

// checkHealth refuses --health-* flags that cannot work, before anything
// connects.
func checkHealth(inv *invocation) error {
	h := &inv.opts.health
	switch {
	case h.cmd == "":
		return nil
	case inv.opts.listen:
		return usagef("elect --observe takes no --health-cmd (it does not take part)")
	case inv.opts.latch:
		return usagef("elect: --health-cmd is not available with --latch (a latch's term would end before CMD stops)")
	case h.interval <= 0:
		return usagef("invalid --health-interval %v: want > 0", h.interval)
	case h.failures < 1:
		return usagef("invalid --health-failures %d: want >= 1", h.failures)
	}
	return nil
}

// healthCheck is --health-cmd as a zklock.HealthCheck, nil without it. Each
// run's result is recorded in the monitor, for /healthz and /leader.
func (a *app) healthCheck(inv *invocation) *zklock.HealthCheck {
	h := &inv.opts.health
	if h.cmd == "" {
		return nil
	}
	return &zklock.HealthCheck{Interval: h.interval, Failures: h.failures, Check: func(ctx context.Context) error {
		cmd := exec.CommandContext(ctx, shell, "-c", h.cmd)
		cmd.Env = a.environ
		var stderr bytes.Buffer
		cmd.Stderr = &limitedWriter{w: &stderr, n: 512}
		cmd.WaitDelay = time.Second
		err := cmd.Run()
		if err != nil {
			if msg := strings.TrimSpace(stderr.String()); msg != "" {
				err = fmt.Errorf("%w: %s", err, msg)
			}
			err = fmt.Errorf("--health-cmd: %w", err)
			a.log.Warn("health check failed", "path", inv.path, "err", err)
		}
		a.mon.checked(err, h.failures) // a.mon is set before the first campaign
		return err
	}}
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// errUnhealthy ends a term whose --health-cmd failed: CMD is stopped, then
// the node deleted.
var errUnhealthy = errors.New("resigning: --health-cmd failing")

// watchHealth starts watching the term of h with hc (nil: no check); the
// channel receives once the term must end for its health.
func (a *app) watchHealth(hc *zklock.HealthCheck, h *zklock.Hold) (<-chan error, context.CancelFunc) {
	if hc == nil {
		return nil, func() {}
	}
	ctx, cancel := context.WithCancel(h.Context())
	return hc.Failing(ctx), cancel
}

// healthState is what the monitor knows of --health-cmd.
type healthState struct {
	on       bool
	failures int   // --health-failures
	failed   int   // runs in a row that failed
	last     error // the latest run's error
}

// checked records a run of --health-cmd (of --health-failures failures).
func (m *monitor) checked(err error, failures int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.health.on, m.health.failures, m.health.last = true, failures, err
	if err == nil {
		m.health.failed = 0
		return
	}
	m.health.failed++
}

// unhealthy describes a failing --health-cmd ("" while it passes, or
// without one).
func (m *monitor) unhealthy() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.health.on || m.health.failed == 0 {
		return ""
	}
	return fmt.Sprintf("unhealthy: %d of %d checks in a row failed (%v)", m.health.failed, m.health.failures, m.health.last)
}
