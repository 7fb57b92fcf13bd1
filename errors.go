package zklock

import (
	"errors"
	"fmt"
	"net"

	"github.com/go-zookeeper/zk"
)

// Sentinel errors, for errors.Is: every error the package returns wraps
// one of them or a go-zookeeper error, or both.
var (
	// ErrLocked is returned by TryLock when another holder has the lock.
	ErrLocked = errors.New("zklock: locked by another holder")

	// ErrNotHeld is returned when releasing what the caller does not hold:
	// a hold released twice, a nil hold, or a hold already lost.
	ErrNotHeld = errors.New("zklock: not held")

	// ErrLost is the cause of a hold's context cancellation when the lock
	// may have been lost. It wraps the reason: ErrSessionExpired,
	// ErrSuspended, ErrNodeDeleted or ErrNodeGone.
	ErrLost = errors.New("zklock: lock lost")

	// ErrSuspended is the reason for a loss when the connection to ZooKeeper
	// stayed suspended longer than the session's loss limit.
	ErrSuspended = errors.New("zklock: connection suspended past the loss limit")

	// ErrSessionExpired is returned to a waiter whose session expired while
	// it queued, and is the reason for a loss on expiry. It wraps
	// zk.ErrSessionExpired.
	ErrSessionExpired = wrapSentinel("zklock: session expired", zk.ErrSessionExpired)

	// ErrNodeGone is the reason for a loss when the holder's node is missing
	// or is not the node the holder created (owned by another session).
	ErrNodeGone = errors.New("zklock: lock node gone or owned by another session")

	// ErrNodeDeleted is the reason for a loss when someone other than the
	// holder deleted its node (an operator forcing a handover, another
	// client), or it was found missing. It wraps ErrNodeGone.
	ErrNodeDeleted = wrapSentinel("zklock: lock node deleted", ErrNodeGone)

	// ErrReleased is the cause of a hold's cancellation at its last release.
	ErrReleased = errors.New("zklock: released")

	// ErrClosed is returned by operations on a closed Session.
	ErrClosed = errors.New("zklock: session closed")

	// ErrInvalidArgument is returned, at once and with nothing sent, for bad
	// input: a nil session or context, a lease count below 1, node data too
	// large for ZooKeeper, ... It fails only the call that carries it.
	ErrInvalidArgument = errors.New("zklock: invalid argument")

	// ErrInvalidPath is returned for a path ZooKeeper would refuse or that
	// cannot be a lock (see ValidatePath). It wraps ErrInvalidArgument.
	ErrInvalidPath = wrapSentinel("zklock: invalid path", ErrInvalidArgument)

	// ErrUpgrade is returned when a read holder asks for the write half of
	// the same read-write lock: an upgrade could deadlock.
	ErrUpgrade = errors.New("zklock: read-to-write upgrade refused")
)

// Errors of requests ZooKeeper refused for good (see refused.go).
var (
	// ErrRefused is wrapped, with ZooKeeper's own error, by the error of an
	// operation that ZooKeeper refused for a reason retrying will not fix:
	// the ones ErrNotAuthorized covers, bad arguments, a request it could
	// not decode (a marshalling error). The operation ends at once.
	ErrRefused = errors.New("zklock: refused by zookeeper")

	// ErrNotAuthorized is wrapped by the error of an operation that an ACL
	// forbids to the session's credentials (zk.ErrNoAuth), whose
	// credentials ZooKeeper rejected (zk.ErrAuthFailed), or that asked for an
	// ACL ZooKeeper refuses (zk.ErrInvalidACL: a creator ACL without
	// credentials, say). Its message names the node and the permission that
	// was missing. It wraps ErrRefused. Connection problems never wrap it.
	ErrNotAuthorized = wrapSentinel("zklock: not authorized", ErrRefused)
)

// Errors of acquires that cannot reach ZooKeeper.
var (
	// ErrUnreachable is wrapped, with the context's error and the latest
	// *ConnectError if any, by the error of an acquire that ends while no
	// server could be reached (refused TLS handshakes: ErrTLSHandshake).
	ErrUnreachable = errors.New("zklock: zookeeper unreachable")

	// ErrTLSHandshake is wrapped, with a *ConnectError holding crypto/tls's
	// reason, by the errors of waits and acquires that end while the TLS
	// handshakes fail for a reason retrying will not fix (see WithTLS). It
	// is a configuration error: such errors do not wrap ErrUnreachable.
	ErrTLSHandshake = errors.New("zklock: TLS handshake failed")

	// ErrNotZooKeeper is wrapped, with a *ConnectError naming the server,
	// by the errors of waits and acquires that end while a server answers
	// with something other than ZooKeeper's protocol. Like ErrTLSHandshake
	// it is a configuration error, never "unreachable".
	ErrNotZooKeeper = errors.New("zklock: not a ZooKeeper server")

	// ErrReplyTooLong is wrapped by the error of a request whose reply was
	// over the session's bound (WithMaxReply), naming the node and the
	// length: that request fails for good, and nothing else does.
	ErrReplyTooLong = errors.New("zklock: reply too long")

	// ErrProtocol is wrapped, with a *ConnectError naming the server, by
	// the error of an acquire during which a server that had granted a
	// session sent what ZooKeeper never sends (its connection is dropped).
	// Like ErrReplyTooLong, it is never "unreachable" (see the package doc).
	ErrProtocol = errors.New("zklock: server broke the protocol")

	// ErrUnlocked is returned by an acquire made WithFailOpen, with a
	// non-nil Hold that is NOT exclusive, when ZooKeeper stayed unreachable
	// for its bound.
	ErrUnlocked = errors.New("zklock: zookeeper unreachable, running without the lock")
)

// Leader-election errors.
var (
	// ErrResigned is the cause of a term's context cancellation by Resign.
	ErrResigned = errors.New("zklock: leadership resigned")

	// ErrRevoked is the cause of a term's context cancellation when someone
	// asked a revocable election's leader to step down (see WithRevocable).
	ErrRevoked = errors.New("zklock: leadership revoked")

	// ErrNoLeader is returned by the Leader methods when no one takes part.
	ErrNoLeader = errors.New("zklock: no leader")

	// ErrRunning is returned by Run while another Run of the same
	// LeaderElection is in progress, and by Start on a started LeaderLatch.
	ErrRunning = errors.New("zklock: election already running")
)

// ErrLatchClosed is why a LeaderLatch stopped after Close or after the
// context given to Start ended (then wrapped with its cause).
var ErrLatchClosed = errors.New("zklock: leader latch closed")

// sentinel is an error with its own message that also matches another error
// under errors.Is, so ErrSessionExpired can be tested as zk.ErrSessionExpired.
type sentinel struct {
	msg  string
	also error
}

func wrapSentinel(msg string, also error) error { return &sentinel{msg: msg, also: also} }

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.also }

// isConnErr reports whether err means the request's outcome is unknown or
// the server unreachable, so it may be retried once the connection is back.
// go-zookeeper fails a request whose write met a closed connection with
// the write's own error.
func isConnErr(err error) bool {
	var op *net.OpError
	return errors.Is(err, zk.ErrConnectionClosed) || errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) || errors.Is(err, net.ErrClosed) || errors.As(err, &op)
}

// A DeletedError is the reason a hold was lost when another client deleted
// its node (it wraps ErrNodeDeleted). Zxid is the transaction that deleted
// it, as ZooKeeper 3.9 and later name it with the notification, for the
// servers' transaction logs (zkTxnLogToolkit); 0 when the server did not
// say. It is greater than the hold's token.
type DeletedError struct {
	Node string // the node's full znode path
	Zxid int64
}

func (e *DeletedError) Error() string {
	if e.Zxid == 0 {
		return fmt.Sprintf("%v: %s", ErrNodeDeleted, e.Node)
	}
	return fmt.Sprintf("%v: %s, at zxid %#x", ErrNodeDeleted, e.Node, e.Zxid)
}

// Unwrap returns ErrNodeDeleted.
func (e *DeletedError) Unwrap() error { return ErrNodeDeleted }
