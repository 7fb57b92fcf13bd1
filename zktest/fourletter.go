package zktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// FourLetter sends a four-letter-word command (ruok, srvr, stat, mntr,
// wchs, wchc, cons, dump, conf, envi, ...) to member i and returns the
// server's whole answer. The local backend whitelists every command; an
// external ensemble may answer "... is not in the whitelist". It fails
// after 5s (a paused member never answers).
func (c *Cluster) FourLetter(i int, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.fourLetter(ctx, i, cmd)
}

func (c *Cluster) fourLetter(ctx context.Context, i int, cmd string) (string, error) {
	if i < 0 || i >= len(c.servers) {
		return "", fmt.Errorf("zktest: server index %d out of range [0,%d)", i, len(c.servers))
	}
	if len(cmd) != 4 {
		return "", fmt.Errorf("zktest: four-letter command %q is not 4 bytes", cmd)
	}
	return fourLetterAt(ctx, c.servers[i], cmd, c.clientTLS())
}

// fourLetterAt sends cmd to addr, over TLS when tc is not nil (the Netty
// connection factory answers four-letter words on its secure port too).
func fourLetterAt(ctx context.Context, addr, cmd string, tc *tls.Config) (string, error) {
	conn, err := dialRaw(ctx, addr, tc)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if tc != nil && errors.Is(err, io.ErrUnexpectedEOF) && len(b) > 0 {
		err = nil // the server closed without a TLS close_notify: the answer is whole
	}
	if err != nil {
		return string(b), fmt.Errorf("zktest: %s to %s: %w", cmd, addr, err)
	}
	return string(b), nil
}

// mode asks member i for its `srvr` Mode (leader, follower, observer,
// standalone). A server that is up but not serving yields an error quoting
// its answer.
func (c *Cluster) mode(ctx context.Context, i int) (string, error) {
	out, err := c.fourLetter(ctx, i, "srvr")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m), nil
		}
	}
	if strings.Contains(out, "whitelist") {
		// External ensemble without srvr: a real handshake tells.
		if err := probeSession(ctx, c.servers[i], c.clientTLS()); err != nil {
			return "", err
		}
		return "unknown", nil
	}
	return "", fmt.Errorf("not serving: %q", strings.TrimSpace(out))
}

// probeSession opens and closes a session on addr with a raw handshake.
func probeSession(ctx context.Context, addr string, tc *tls.Config) error {
	conn, err := dialRaw(ctx, addr, tc)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := wire.WriteFrame(conn, wire.EncodeConnectRequest(wire.ConnectRequest{TimeoutMs: 10000})); err != nil {
		return err
	}
	p, err := wire.ReadFrame(conn, wire.DefaultMaxFrame)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	_, sid, _, err := wire.ParseConnectResponse(p)
	if err != nil || sid == 0 {
		return fmt.Errorf("handshake refused (%v)", err)
	}
	return wire.WriteFrame(conn, wire.AppendRequestHeader(nil, wire.RequestHeader{Xid: 1, Type: wire.OpCloseSession}))
}

// WaitServing polls (every 50ms) until every live member (all members for
// ZK_SERVERS; started and unpaused ones otherwise) reports a Mode in
// `srvr`, i.e. it is in a quorum and serves clients. It returns nil then,
// or, when ctx ends first, an error wrapping ctx.Err() that names the
// member that was not serving and why. With no live member it keeps trying
// until ctx ends.
//
// Right after a leader is killed the followers report their old Mode until
// they notice (about syncLimit ticks, 2s by default), so WaitServing may
// return before the new election; poll Leader for that.
func (c *Cluster) WaitServing(ctx context.Context) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := c.servingOnce(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zktest: ensemble not serving: %w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func (c *Cluster) servingOnce(ctx context.Context) error {
	live := c.liveMembers()
	if len(live) == 0 {
		return errors.New("no server is running")
	}
	for _, i := range live {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.mode(qctx, i)
		cancel()
		if err != nil {
			return fmt.Errorf("server %d (%s): %w", i, c.servers[i], err)
		}
	}
	return nil
}

// Leader returns the index of the live member whose `srvr` says
// "Mode: leader" (0 for a standalone server). It returns ErrNoLeader while
// none does, and ErrUnsupported without fault control (ZK_SERVERS).
func (c *Cluster) Leader() (int, error) {
	if c.ctl == nil {
		return -1, fmt.Errorf("%w (%s backend)", ErrUnsupported, c.backend)
	}
	var errs []error
	for _, i := range c.liveMembers() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m, err := c.mode(ctx, i)
		cancel()
		if m == "leader" || m == "standalone" {
			return i, nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("server %d: %w", i, err))
		}
	}
	return -1, errors.Join(append([]error{ErrNoLeader}, errs...)...)
}
