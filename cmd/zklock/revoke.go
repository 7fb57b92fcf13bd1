package main

import (
	"context"
	"fmt"
	"path"

	"github.com/zklock/zklock"
)

// revokeVerb is `zklock revoke NODE-PATH`.
var revokeVerb = &verb{name: "revoke", args: "NODE-PATH", summary: "ask a revocable holder to release (Curator __REVOKE__)",
	run: runRevoke,
	about: "Writes Curator's __REVOKE__ to one participant's node, asking a revocable holder\n" +
		"(zklock --revocable, a revocable Curator lock) to release. NODE-PATH is the\n" +
		"node (see zklock status), not the lock path: a path not named as a lock node,\n" +
		"or a node with children, is refused (exit 2). A node that is gone is reported\n" +
		"but is not an error. Revocation is advisory: zklock does not wait. With\n" +
		"--namespace, NODE-PATH is relative to the namespace, as status lists it.",
	example: "zklock revoke /locks/nightly-backup/_c_0f8e...-lock-0000000007"}

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

// isLockNodeName reports whether name is a lock node's, by the library's
// rule for participants (every recipe's marker and sequence suffix, ours,
// Curator's and kazoo's).
func isLockNodeName(name string) bool { return len(zklock.Queue("/", []string{name})) == 1 }

// aclOptions are the options --acl asks for.
func (o *verbOpts) aclOptions() []zklock.Option {
	if o.acl == nil {
		return nil
	}
	return []zklock.Option{zklock.WithACL(o.acl)}
}
