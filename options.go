package zklock

import (
	"crypto/tls"
	"log/slog"
	"math"
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
	maxReply  int // see WithMaxReply
}

type authInfo struct {
	scheme string
	cred   []byte
}

func defaultSessionConfig() sessionConfig {
	return sessionConfig{
		timeout:  10 * time.Second,
		dialer:   net.DialTimeout,
		logger:   slog.New(slog.DiscardHandler),
		retry:    DefaultBackoff,
		maxReply: DefaultMaxReply,
	}
}

// The range of WithSessionTimeout (docs/protocol.md#limits says why).
const (
	MinSessionTimeout = 100 * time.Millisecond
	MaxSessionTimeout = time.Duration(math.MaxInt32) * time.Millisecond
)

// WithSessionTimeout sets the ZooKeeper session timeout asked of the
// server, which may negotiate it into its own range (the session logs the
// granted value at Warn level when it differs: see Session.SessionTimeout);
// the loss limit is based on the negotiated value. Connect refuses a value
// outside [MinSessionTimeout, MaxSessionTimeout] with ErrInvalidArgument.
// Default: 10s.
func WithSessionTimeout(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.timeout = d }
}

// WithLossLimit sets how long a suspended connection may last, counted
// from when a server was last heard from, before every hold of the session
// is declared lost (ErrSuspended): 0 at once, a negative limit only when
// the session expires. Default: two thirds of the negotiated session
// timeout. See "The loss limit" in the package doc for the trade-off.
func WithLossLimit(d time.Duration) SessionOption {
	return func(c *sessionConfig) { c.lossLimit, c.lossSet = d, true }
}

// WithDialer sets the dialer used to reach the servers (a test proxy, say),
// given each server's address as listed in Connect, names unresolved; its
// errors are the reasons of failed attempts (ConnectError), and WithTLS runs
// TLS over its connections. Default: net.DialTimeout.
func WithDialer(d zk.Dialer) SessionOption {
	return func(c *sessionConfig) { c.dialer = d }
}

// WithTLS makes the session speak TLS to the servers' secureClientPort.
// cfg is cloned at each connection; when its ServerName is empty (and
// InsecureSkipVerify false), each server's certificate is checked against
// the host given for it in Connect's list (an IP address against the IP
// SANs); set ServerName to check every server against one name, and put a
// client certificate in cfg.Certificates. A handshake refused for a reason
// retrying will not fix (an untrusted or misnamed certificate, a refused
// client certificate, a server without TLS) fails waits with errors
// wrapping ErrTLSHandshake and a *ConnectError, not ErrUnreachable, and
// WithFailOpen does not run on it; the session keeps retrying. Default: off
// (so is a nil cfg). See docs/protocol.md#connecting-servers-and-tls.
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
// lock event, with wait and hold times (for metrics). It is called on the
// goroutine where the event happens and must not block. Default: none.
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
// to go-zookeeper's Connect. zk.WithEventCallback, zk.WithDialer and
// zk.WithHostProvider have no effect (the session installs its own after
// them): use WithObserver and WithDialer; the session tries the servers in
// a shuffled order, as go-zookeeper does. Default: none.
func WithZKOptions(opts ...func(*zk.Conn)) SessionOption {
	return func(c *sessionConfig) { c.zkOpts = append(c.zkOpts, opts...) }
}

// WithMaxReply bounds the length of a reply the session reads
// (DefaultMaxReply unless set): a longer one fails its own request with
// ErrReplyTooLong, and nothing else (docs/protocol.md#bounded-replies).
// Connect refuses a bound under 1 KiB with ErrInvalidArgument.
func WithMaxReply(n int) SessionOption {
	return func(c *sessionConfig) { c.maxReply = n }
}

// minMaxReply is the least bound WithMaxReply takes.
const minMaxReply = 1 << 10

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
	health    *HealthCheck // leader recipes: see WithHealthCheck
	owner     string       // see WithOwner
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
	if !c.revocable {
		c.data = withOwner(c.data, c.owner)
	}
	return c
}

// WithData sets the data stored in the lock's node, which other participants
// and `zklock status` can read. Default: this host's address, as Curator does.
func WithData(b []byte) Option {
	return func(c *lockConfig) { c.data, c.dataSet = b, true }
}

// WithACL sets the ACL of the lock's nodes and of the parents it creates
// (nodes that exist already keep theirs): CreatorACL, CreatorWorldReadACL,
// WorldACL, ParseACL's, or any other. An ACL that names the creator needs
// the session's credentials (WithAuth). Default: WorldACL(), open to all,
// as Curator's default.
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

// WithRevocable makes the lock revocable, as Curator's makeRevocable: the
// node is created with empty data (WithData is ignored), and when anyone
// asks for revocation (Revoke, Curator's Revoker, `zklock revoke`) the
// hold's Revoked channel closes. Revocation is advisory: the holder decides
// whether and when to release. Default: off.
func WithRevocable() Option {
	return func(c *lockConfig) { c.revocable = true }
}

// WithNamespace roots every path of the session under /ns, as Curator's
// namespace does: a Mutex at "/locks/x" with namespace "app" is the znode
// /app/locks/x, and excludes a Curator InterProcessMutex at "/locks/x" on
// a client with namespace "app". ns has no leading slash ("app",
// "app/sub"); Connect returns an error wrapping ErrInvalidPath for one
// ValidateNamespace refuses. Recipes, Participants, Revoke and Observe take
// and return the caller's paths, without the namespace; Hold.Guard,
// Event.Node and Session.Conn use full znode paths (Session.FullPath).
// Default: none. See docs/protocol.md#curator-namespaces.
func WithNamespace(ns string) SessionOption {
	return func(c *sessionConfig) { c.namespace = ns }
}

// WithFailOpen makes an acquire that cannot reach ZooKeeper (no server
// reached, as the package doc defines it) for bound return at once a
// non-exclusive Hold with ErrUnlocked, so an efficiency lock's job runs
// anyway; never use it for locks that protect data. The Hold has no node or
// token (Token 0, Exclusive false), and its Done closes only on Release,
// which returns nil. As an error comes with it, code that treats every error
// as failure stays fail-closed (see the example). Default: off (the acquire
// waits until its context ends, then fails with ErrUnreachable).
func WithFailOpen(bound time.Duration) Option {
	return func(c *lockConfig) { c.failOpen = bound }
}

// WithRequeue makes LeaderElection.Run campaign again after each term, as
// Curator's LeaderSelector.autoRequeue: after fn returns, after the term is
// lost or resigned, and after a campaign that failed on an expiry or a
// dropped connection. Run then returns only when its context ends, the
// session is closed, a campaign fails for good (bad ACL, ...), or fn returns
// an error while still leader. Other recipes ignore it. Default: off.
func WithRequeue() Option {
	return func(c *lockConfig) { c.requeue = true }
}
