package zklock

import (
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// SessionOption configures Connect.
type SessionOption func(*sessionConfig)

type sessionConfig struct {
	timeout   time.Duration
	lossLimit time.Duration
	lossSet   bool
	dialer    zk.Dialer
	logger    *slog.Logger
	observer  func(Event)
	auth      []authInfo
	zkOpts    []func(*zk.Conn)
	retry     Backoff
	namespace string // see WithNamespace
	tls       *tls.Config
}

type authInfo struct {
	scheme string
	cred   []byte
}

func defaultSessionConfig() sessionConfig {
	return sessionConfig{
		timeout: 10 * time.Second,
		dialer:  net.DialTimeout,
		logger:  slog.New(slog.DiscardHandler),
		retry:   DefaultBackoff,
	}
}

// WithSessionTimeout sets the ZooKeeper session timeout asked of the server.
// The server may negotiate it into its own [min, max] range; the session learns
// the negotiated value and bases its loss limit on it. Default: 10s.
func WithSessionTimeout(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.timeout = d }
}

// WithLossLimit sets how long a suspended connection may last before every
// hold of the session is declared lost, counted from the last time the server
// was heard from (not from when the disconnection was noticed).
//
// This is the trade-off Curator exposes as its connection-state error policy.
// The server deletes a silent session's nodes no earlier than one session
// timeout after it last heard from the client, and the client stops hearing
// the server at about the same moment, so any limit shorter than the session
// timeout fires before another client can take the lock after a partition;
// the margin is what covers scheduling delays on a loaded machine.
//
//   - 0 declares holds lost as soon as the connection is suspended (Curator's
//     default "standard" policy): safest, but a server restart or leader
//     election loses every lock.
//   - A negative limit declares holds lost only when the session expires
//     (Curator's "session" policy): a partitioned holder learns of the loss
//     only when it reaches a server again, long after another client may have
//     taken the lock. Use it only with fencing.
//
// Default: two thirds of the negotiated session timeout, which is when
// go-zookeeper itself gives up on a silent connection. A holder cut off by a
// silent partition is therefore told as soon as the client notices, at least a
// third of a session timeout before the server can expire it; a holder whose
// server died and who reconnects elsewhere within the limit keeps its locks.
func WithLossLimit(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.lossLimit, c.lossSet = d, true }
}

// WithDialer sets the dialer used to reach the servers (for example a test
// proxy). It is given each server's address as listed in Connect, a host
// name unresolved (it resolves it, as net.DialTimeout does), and its
// errors are the reasons of failed attempts (see ConnectError). The
// session wraps the connections it returns to learn when the server was
// last heard from; with WithTLS, TLS runs over them first. Default:
// net.DialTimeout.
func WithDialer(d zk.Dialer) SessionOption {
	return func(c *sessionConfig) { c.dialer = d }
}

// WithTLS makes the session speak TLS to the servers, as to ZooKeeper's
// secureClientPort (3.5 and later, served by the Netty connection factory;
// Java clients set zookeeper.client.secure=true for the same). cfg is
// cloned at each connection; when its ServerName is empty (and
// InsecureSkipVerify is false) each server's certificate is checked against
// the host given for that server in Connect's list: per-host certificates
// for zk1, zk2 and zk3 (without IP SANs) verify when the list names zk1,
// zk2 and zk3, and an IP address in the list is checked against the
// certificate's IP SANs. Set ServerName to check every server against one
// name instead. A client certificate for servers that require one
// (ssl.clientAuth=need) goes in cfg.Certificates. A nil cfg leaves TLS off.
//
// A handshake that fails for a reason retrying will not fix (the server's
// certificate is not trusted or not for the name, the server refused the
// client's certificate or its absence, the server does not speak TLS) is a
// configuration error, not an unreachable ZooKeeper: the errors of waits
// that end while it lasts wrap ErrTLSHandshake and a *ConnectError with
// the crypto/tls reason, not ErrUnreachable, and WithFailOpen does not run
// without the lock on it. The session still retries, as the servers'
// certificates may be replaced.
//
// The TLS connection runs over what the dialer of WithDialer returns (by
// default a TCP connection), so a dialer given there still decides where
// and how to connect (a SOCKS tunnel, say), and sees only encrypted bytes:
// a proxy that reads ZooKeeper's protocol cannot be put in between. The
// session reads its liveness and fencing tokens from the decrypted side,
// so tokens and loss detection work as without TLS. The handshake must
// finish within the session timeout asked for (go-zookeeper's own 1s
// connect timeout bounds only the TCP connection); a failed handshake
// counts as a failed connection attempt and is retried like one. Default:
// off (plaintext).
func WithTLS(cfg *tls.Config) SessionOption {
	return func(c *sessionConfig) { c.tls = cfg }
}

// WithLogger sets the logger for state changes (suspended, reconnected,
// expired) and lock events (acquired, released, lost). Default: silent.
func WithLogger(l *slog.Logger) SessionOption {
	return func(c *sessionConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithObserver sets a function called for every session state change and
// every lock event, with wait and hold times, so callers can feed their own
// metrics. It is called synchronously from the goroutine where the event
// happens and must not block. Default: none.
func WithObserver(f func(Event)) SessionOption {
	return func(c *sessionConfig) { c.observer = f }
}

// WithAuth adds ZooKeeper credentials to the session (for example scheme
// "digest" and credentials "user:password"). They are sent again after every
// reconnect. Default: none.
func WithAuth(scheme string, cred []byte) SessionOption {
	return func(c *sessionConfig) { c.auth = append(c.auth, authInfo{scheme, cred}) }
}

// WithZKOptions passes options such as zk.WithLogger or zk.WithMaxBufferSize
// to go-zookeeper's Connect. The session always installs its own event
// callback and dialer wrapper after these, so zk.WithEventCallback and
// zk.WithDialer given here have no effect: use WithObserver and WithDialer.
func WithZKOptions(opts ...func(*zk.Conn)) SessionOption {
	return func(c *sessionConfig) { c.zkOpts = append(c.zkOpts, opts...) }
}

// WithRetry sets the backoff between retries of a ZooKeeper request that
// failed on a connection problem while acquiring. Default: DefaultBackoff.
func WithRetry(b Backoff) SessionOption {
	return func(c *sessionConfig) { c.retry = b }
}

// Option configures a lock recipe.
type Option func(*lockConfig)

type lockConfig struct {
	data      []byte
	dataSet   bool
	acl       []zk.ACL
	revocable bool
	requeue   bool // leader election: campaign again after each term (see WithRequeue)
	failOpen  time.Duration
}

func newLockConfig(opts []Option) lockConfig {
	c := lockConfig{acl: zk.WorldACL(zk.PermAll)}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.revocable:
		c.data = []byte{} // Curator's revocable nodes are empty; only __REVOKE__ is ever written
	case !c.dataSet:
		c.data = []byte(hostAddress())
	}
	return c
}

// WithData sets the data stored in the lock's node, which other participants
// and `zklock status` can read. Default: this host's address, as Curator does.
func WithData(b []byte) Option {
	return func(c *lockConfig) { c.data, c.dataSet = b, true }
}

// WithACL sets the ACL of the lock's nodes and of the parents it creates.
// Default: zk.WorldACL(zk.PermAll), open to all, as Curator's default.
func WithACL(acl []zk.ACL) Option {
	return func(c *lockConfig) {
		if len(acl) > 0 {
			c.acl = acl
		}
	}
}

// hostAddress is the first non-loopback IPv4 address of this host, read from
// the interfaces (no name lookup, so no network traffic), or 127.0.0.1.
var hostAddress = sync.OnceValue(func() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
})

// WithRevocable makes the lock revocable, as Curator's makeRevocable does:
// the node is created with empty data (WithData is ignored) and watched, and
// when anyone asks for revocation (Revoke, Curator's Revoker.attemptRevoke,
// `zklock revoke`) the hold's Revoked channel closes. Revocation is
// advisory: the holder decides whether and when to release. Default: off.
func WithRevocable() Option {
	return func(c *lockConfig) { c.revocable = true }
}

// WithNamespace roots every path of the session under /ns, as Curator's
// CuratorFrameworkFactory.Builder.namespace does: a Mutex at "/locks/x" on a
// session with namespace "app" uses the znode /app/locks/x, and excludes a
// Curator InterProcessMutex at "/locks/x" whose client has namespace "app",
// or one at "/app/locks/x" without a namespace.
//
// The namespace is written without a leading slash ("app", or "app/sub" for
// a nested one). It must make a valid path when prefixed with "/": no
// leading or trailing slash, no empty, "." or ".." element, none of the
// control or reserved characters ZooKeeper refuses in a path; Connect
// returns an error wrapping ErrInvalidPath otherwise (Curator rejects the
// same names). The empty namespace means none, as in Curator.
//
// Every recipe (Mutex, SemaphoreMutex, Semaphore, RWLock, MultiLock members,
// LeaderElection, LeaderLatch), Participants, Revoke and Observe take and
// return paths as the caller sees them, without the namespace: Hold.Path,
// Hold.Node and Participant.Path do not carry it. Hold.Guard, made for the
// raw connection (Session.Conn), which knows nothing of namespaces, carries
// the full znode path, as do Event.Node and the znodes seen through
// Session.Conn; Session.FullPath converts a caller's path into one.
//
// The namespace node is created as Curator 5.4 creates it, a CONTAINER
// node with empty data (with the recipe's ACL), so that, like Curator's, the
// server reaps it once it has no children. Curator makes it at its client's
// first operation; zklock together with the lock's other missing parents,
// at the first create under it (a read such as Participants creates
// nothing). Default: no namespace.
func WithNamespace(ns string) SessionOption {
	return func(c *sessionConfig) { c.namespace = ns }
}

// WithFailOpen makes an acquire that cannot reach ZooKeeper for `bound`
// return at once with a non-exclusive Hold and ErrUnlocked, so that an
// efficiency lock's job runs anyway instead of being skipped. The bound
// counts time during which the session is not connected; an acquire that is
// merely waiting for another holder is never affected.
//
// This is for efficiency locks only: jobs whose duplicate run only wastes
// work (a report, a cache warm-up), never for locks that protect data. The
// returned Hold has no node and no fencing token (Token returns 0, Exclusive
// false), its Done channel closes only when it is released, and Release
// returns nil. Because an error is returned alongside it, code that treats
// every error as failure stays fail-closed:
//
//	h, err := m.Lock(ctx)
//	switch {
//	case errors.Is(err, zklock.ErrUnlocked):
//		log.Printf("running without the lock: %v", err)
//	case err != nil:
//		return err
//	}
//	defer h.Release()
//
// Default: off (an unreachable ZooKeeper makes the acquire wait until its
// context ends, then fail with ErrUnreachable).
func WithFailOpen(bound time.Duration) Option {
	return func(c *lockConfig) { c.failOpen = bound }
}

// WithRequeue makes LeaderElection.Run campaign again after each term, as
// Curator's LeaderSelector.autoRequeue does: after the function returns,
// after leadership is lost or resigned, and after a campaign fails because
// the session expired or the connection dropped. Run then returns only when
// its context ends, the session is closed, a campaign fails for good (bad
// ACL, ...), or the function returns an error while still leader. Other
// recipes ignore it. Default: off (Run leads at most once).
func WithRequeue() Option {
	return func(c *lockConfig) { c.requeue = true }
}
