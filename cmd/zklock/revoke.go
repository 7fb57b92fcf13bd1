package main

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"

	"github.com/zklock/zklock"
)

// runRevoke is `zklock revoke NODE-PATH`: it writes Curator's "__REVOKE__"
// to the node, as Curator's Revoker.attemptRevoke does, asking a revocable
// holder (a zklock hold made revocable, a revocable Curator lock) to
// release. Revocation is advisory: the command does not wait for the holder.
// A node that does not exist is reported on stderr but is not an error (the
// holder may just have released). Everything is bounded by --timeout (10s if
// 0); failures exit 1.
//
// NODE-PATH must be one holder's node, not the lock path (the directory of
// contenders): a path whose last element is not named as a lock node
// (...lock-NNNNNNNNNN, __READ__, __WRIT__ or lease- with a sequence number)
// is refused before connecting, and a node with children is refused before
// anything is written; both exit 2 and leave the node's data unchanged.
func runRevoke(a *app, inv *invocation) int {
	if !isLockNodeName(path.Base(inv.path)) {
		return a.fail(usagef("revoke: %s is not a lock node (a lock's participant, named ...-lock-, __READ__, __WRIT__ or "+
			"lease- followed by a sequence number): to revoke a holder, pass its node as listed by 'zklock status %s'", inv.path, inv.path))
	}
	connected, err := a.oneShot(inv, func(ctx context.Context, s *zklock.Session) error {
		// The raw connection knows nothing of the namespace: it is given
		// the znode's full path; Revoke and the messages take the caller's.
		ok, stat, err := s.Conn().Exists(s.FullPath(inv.path))
		switch {
		case err != nil:
			return fmt.Errorf("read %s: %w", inv.path, err)
		case !ok:
			a.errorf("%s does not exist: nothing to revoke", inv.path)
			return nil
		case stat.NumChildren > 0:
			return usagef("%s has %d children: it is a lock path, not a lock node; pass one of the nodes listed by 'zklock status %s'",
				inv.path, stat.NumChildren, inv.path)
		}
		return zklock.Revoke(ctx, s, inv.path)
	})
	if err != nil {
		a.errorf("revoke %s: %v", inv.path, err)
		if !connected {
			return exitError
		}
		return exitCode(err)
	}
	a.log.Info("zklock: revocation requested", "node", inv.path)
	return exitOK
}

// lockNodeName matches the names our recipes and Curator's give a lock's
// participants: a marker (lock-, __READ__, __WRIT__, lease-), optionally
// behind Curator's protection prefix, then ZooKeeper's 10-character
// sequence suffix (a wrapped, negative sequence is "-" and 9 digits).
var lockNodeName = regexp.MustCompile(`(lock-|__READ__|__WRIT__|lease-)(\d{10}|-\d{9})$`)

func isLockNodeName(name string) bool { return lockNodeName.MatchString(name) }

// oneShot runs a verb's single ZooKeeper operation: it connects, then runs
// op, both bounded by --timeout (10s if 0) and by an interrupting signal. A
// request queued on a dead connection does not see ctx, so at the deadline
// the session is closed under op. connected tells whether the connect
// succeeded.
func (a *app) oneShot(inv *invocation, op func(context.Context, *zklock.Session) error) (connected bool, err error) {
	ctx, stop := a.interruptible(context.Background())
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, inv.cfg.connectBound())
	defer cancel()

	s, err := a.connect(ctx, &inv.cfg)
	if err != nil {
		return false, err
	}
	defer s.Close()
	errc := make(chan error, 1)
	go func() { errc <- op(ctx, s) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		s.Close()
		<-errc
		err = context.Cause(ctx)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("no answer from ZooKeeper within %v", inv.cfg.connectBound())
	}
	return true, err
}

// lockOptions are the library options that a holding verb's flags ask for.
func (o *verbOpts) lockOptions() []zklock.Option {
	opts := o.aclOptions()
	if d := o.nodeData(); d != "" {
		opts = append(opts, zklock.WithData([]byte(d)))
	}
	if o.revocable {
		opts = append(opts, zklock.WithRevocable())
	}
	if o.owner != "" {
		opts = append(opts, zklock.WithOwner(o.owner))
	}
	return opts
}

// aclOptions are the options --acl asks for.
func (o *verbOpts) aclOptions() []zklock.Option {
	if o.acl == nil {
		return nil
	}
	return []zklock.Option{zklock.WithACL(o.acl)}
}
