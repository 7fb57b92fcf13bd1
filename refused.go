package zklock

// Telling the errors ZooKeeper returns for good (an ACL, bad credentials,
// a request it cannot decode) from the ones retrying can get past.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// access is what a request needed of a node: the operation, as the error
// says it, and the ZooKeeper permission it takes.
type access struct {
	op   string // "read", "list", "create in", ...
	perm string // READ, CREATE, ...
}

var (
	accessRead   = access{"read", "READ"}
	accessList   = access{"list", "READ"}
	accessCreate = access{"create a node in", "CREATE"}
	accessWrite  = access{"write", "WRITE"}
)

// refused returns the error that ends an operation whose request on node
// (a znode path, what is the role it plays: "the node ahead of ours") failed
// with err, when retrying cannot help; nil when it may (a connection
// problem, a node that is gone, ...). The error wraps ErrNotAuthorized or
// ErrRefused, and err; or, for a reply over the session's bound,
// ErrReplyTooLong.
func refused(err error, a access, node, what string) error {
	if !permanent(err) {
		return nil
	}
	if what != "" {
		node += " (" + what + ")"
	}
	switch _, tooLong := replyTooLong(err); {
	case tooLong:
		return tooLongError(err, a, node)
	case errors.Is(err, zk.ErrInvalidACL):
		return fmt.Errorf("%w: %s %s: ZooKeeper refused the ACL (an id that does not fit its scheme, such as a digest id not USER:BASE64-SHA1 or an ip id not an address; or a creator ACL without credentials: see WithAuth): %w",
			ErrNotAuthorized, a.op, node, err)
	case errors.Is(err, zk.ErrAuthFailed):
		return fmt.Errorf("%w: %s %s: the session's credentials were rejected: %w", ErrNotAuthorized, a.op, node, err)
	case errors.Is(err, zk.ErrNoAuth):
		return fmt.Errorf("%w: %s %s needs %s permission, which its ACL does not give this session's credentials: %w",
			ErrNotAuthorized, a.op, node, a.perm, err)
	}
	return fmt.Errorf("%w: %s %s: %w", ErrRefused, a.op, node, err)
}

// permanent reports whether err is a ZooKeeper error that the same request
// would get again: NoAuth, AuthFailed, InvalidACL, BadArguments, a
// marshalling error, or a reply over the session's bound.
func permanent(err error) bool {
	if err == nil {
		return false
	}
	_, tooLong := replyTooLong(err)
	return tooLong || errors.Is(err, zk.ErrNoAuth) || errors.Is(err, zk.ErrAuthFailed) ||
		errors.Is(err, zk.ErrInvalidACL) || errors.Is(err, zk.ErrBadArguments) || isMarshalling(err)
}

// isMarshalling reports ZooKeeper's MarshallingError (code -5), for which
// go-zookeeper v1.0.4 has no error value of its own: it returns
// fmt.Errorf("unknown error: -5").
func isMarshalling(err error) bool {
	return strings.HasSuffix(err.Error(), "unknown error: -5")
}
