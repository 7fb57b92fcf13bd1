package reliability

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Intruder is a client without credentials that, every period, tries what
// a creator ACL must refuse it in every lock directory: list it, read,
// overwrite with Curator's revocation request (__REVOKE__) and delete each
// node in it (their names learned through the suite's authenticated
// connection, as from a log), queue a node nobody else may read, create a
// node open to all, change the directory's ACL and delete it. Each attempt
// must fail with zk.ErrNoAuth, or zk.ErrNoNode for a node or directory gone
// meanwhile; any other outcome is recorded with
// Env.Errorf, which fails the scenario. The rounds are not logged as faults:
// the checkers' allowances around faults must not cover the whole run.
func Intruder(period time.Duration) func(context.Context, *Env) {
	return func(ctx context.Context, e *Env) {
		conn := e.C.Connect(e.T, 10*time.Second)
		var tries, refused, gone atomic.Int64
		attempt := func(what, p string, err error) {
			tries.Add(1)
			switch {
			case errors.Is(err, zk.ErrNoAuth):
				refused.Add(1)
			case errors.Is(err, zk.ErrNoNode): // released (or reaped) meanwhile: nothing done
				gone.Add(1)
			case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrSessionMoved):
				tries.Add(-1) // a fault of the nemesis: the outcome is unknown, and retried next round
			default:
				e.Errorf("intruder: %s %s: %v, want %v", what, p, err, zk.ErrNoAuth)
			}
		}
		Every(ctx, period, func() {
			for i := range e.Sc.Locks {
				intrude(e, conn, LockPath(e.Root, i), attempt)
			}
		})
		e.T.Logf("%s: intruder: %d attempts: %d refused with NoAuth, %d found their node gone", e.Sc.Name, tries.Load(), refused.Load(), gone.Load())
		if tries.Load() == 0 {
			e.Errorf("intruder: no attempt")
		}
	}
}

// intrude makes one round of attempts on the lock directory dir.
func intrude(e *Env, conn *zk.Conn, dir string, attempt func(what, p string, err error)) {
	_, _, err := conn.Children(dir)
	attempt("list", dir, err)
	names, _, _ := e.Conn.Children(dir) // the spy's listing
	for _, n := range names {
		node := dir + "/" + n
		_, _, err := conn.Get(node)
		attempt("read", node, err)
		_, err = conn.Set(node, []byte("__REVOKE__"), -1)
		attempt("revoke", node, err)
		err = conn.Delete(node, -1)
		attempt("delete", node, err)
	}
	_, err = conn.Create(dir+"/_c_5d1e0c4a-7b1f-4c2e-9a0b-3c6f1e2d4a5b-lock-", []byte("intruder"),
		zk.FlagEphemeral|zk.FlagSequence, zk.DigestACL(zk.PermAll, "mallory", "x"))
	attempt("queue an unreadable node in", dir, err)
	_, err = conn.Create(dir+"/intruder", nil, 0, zk.WorldACL(zk.PermAll))
	attempt("create in", dir, err)
	_, err = conn.SetACL(dir, zk.WorldACL(zk.PermAll), -1)
	attempt("set the ACL of", dir, err)
	err = conn.Delete(dir, -1)
	attempt("delete", dir, err)
}
