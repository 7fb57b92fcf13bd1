package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zklock/zklock"
)

// runRevoke is `zklock revoke NODE-PATH`: it writes Curator's "__REVOKE__"
// to the node, as Curator's Revoker.attemptRevoke does, asking a revocable
// holder (a zklock hold made revocable, a revocable Curator lock) to
// release. Revocation is advisory: the command does not wait for the holder.
// A node that does not exist is reported on stderr but is not an error (the
// holder may just have released). Everything is bounded by --timeout (10s if
// 0); failures exit 1.
func runRevoke(a *app, inv *invocation) int {
	ctx, stop := a.interruptible(context.Background())
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, inv.cfg.connectBound())
	defer cancel()

	s, err := a.connect(ctx, &inv.cfg)
	if err != nil {
		a.errorf("revoke %s: %v", inv.path, err)
		return exitError
	}
	defer s.Close()
	errc := make(chan error, 1)
	go func() {
		ok, _, err := s.Conn().Exists(inv.path)
		switch {
		case err != nil:
			errc <- fmt.Errorf("read %s: %w", inv.path, err)
		case !ok:
			a.errorf("%s does not exist: nothing to revoke", inv.path)
			errc <- nil
		default:
			errc <- zklock.Revoke(ctx, s, inv.path)
		}
	}()
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.Close() // a request queued on a dead connection does not see ctx
		<-errc
		err = context.Cause(ctx)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer from ZooKeeper within %v", inv.cfg.connectBound())
		}
		a.errorf("revoke %s: %v", inv.path, err)
		return exitCode(err)
	}
	a.log.Info("zklock: revocation requested", "node", inv.path)
	return exitOK
}

// lockOptions are the library options that a holding verb's flags ask for.
func (o *verbOpts) lockOptions() []zklock.Option {
	if o.revocable {
		return []zklock.Option{zklock.WithRevocable()}
	}
	return nil
}
