package zktest

import (
	"io"
	"time"
)

// Option configures a Cluster started by Start or StartEnsemble.
type Option func(*config)

type config struct {
	servers        int
	tick           time.Duration
	containerCheck time.Duration
	fsync          bool
	logOutput      io.Writer
	startTimeout   time.Duration
	props          map[string]string
	heap           string
	jvmFlags       []string
	tls            bool     // WithTLS
	clientAuth     bool     // WithTLSClientAuth
	tlsNames       []string // WithTLSHostNames
	quorumRelay    bool     // WithQuorumRelay
	version        string   // WithVersion; "": EnvVersion's
	serverHome     string   // WithServerHome; "": search
}

func defaultConfig(servers int) config {
	return config{
		servers:        servers,
		tick:           100 * time.Millisecond,
		containerCheck: 100 * time.Millisecond,
		startTimeout:   60 * time.Second,
		props:          map[string]string{},
		heap:           "256m",
	}
}

// WithServers sets the number of ZooKeeper servers (default 1 for Start, 3
// for StartEnsemble). One server runs in standalone mode; two or more form
// a quorum ensemble, which serves while a majority of its members run.
// Values below 1 make Start fail the test.
func WithServers(n int) Option { return func(c *config) { c.servers = n } }

// WithVersion selects this cluster's ZooKeeper release ("3.9", "3.8") for
// the local backend, as EnvVersion does for every cluster: the search (see
// EnvSearch) skips installations of other releases, and an unknown value
// fails Start. It excludes the other backends (ZK_SERVERS, containers),
// which ignore it, and ZKTEST_CLASSPATH still overrides it:
// Cluster.ServerVersion says which release answers.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithTickTime sets ZooKeeper's tickTime (default 100ms). The generated
// config also sets minSessionTimeout=2*tick and maxSessionTimeout=60000, so
// any session timeout from 2 ticks to 60s is granted as asked. The quorum
// limits are derived from it: syncLimit covers at least 2s and initLimit at
// least 10s, so a loaded 2-core machine does not drop followers.
func WithTickTime(d time.Duration) Option { return func(c *config) { c.tick = d } }

// WithContainerCheckInterval sets how often the server deletes empty
// CONTAINER nodes and expired TTL nodes (-Dznode.container.checkIntervalMs,
// default 100ms).
func WithContainerCheckInterval(d time.Duration) Option {
	return func(c *config) { c.containerCheck = d }
}

// WithFsync turns fsync of the transaction log on or off (default off:
// forceSync=no, which survives SIGKILL because the page cache survives;
// benchmarks turn it on to measure real commit latency).
func WithFsync(on bool) Option { return func(c *config) { c.fsync = on } }

// WithLogOutput sends the servers' logs (slf4j-simple at INFO, one line per
// event, prefixed with "zk<N> ") to w. By default they are discarded, except
// that the last lines at WARN and above are kept in memory and quoted in the
// error when a server fails to start. w must be safe for use until the test's
// cleanup has finished; writes from different servers may interleave by line.
func WithLogOutput(w io.Writer) Option { return func(c *config) { c.logOutput = w } }

// WithStartTimeout bounds how long Start, StartEnsemble and Cluster.Start
// wait for the servers to serve (default 60s).
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// WithSystemProperty passes -Dkey=value to every server JVM, for server
// features not covered by the other options. The harness already sets
// zookeeper.4lw.commands.whitelist=*, zookeeper.admin.enableServer=false,
// zookeeper.extendedTypesEnabled=true (TTL nodes) and
// znode.container.checkIntervalMs; a property given here overrides them.
func WithSystemProperty(key, value string) Option {
	return func(c *config) { c.props[key] = value }
}

// WithHeap sets the JVM's maximum heap (-Xmx, default "256m").
func WithHeap(size string) Option { return func(c *config) { c.heap = size } }

// WithJVMFlags appends flags to the server JVM's command line, after the
// defaults, so a later flag wins (for example "-XX:TieredStopAtLevel=4" gives
// benchmarks the optimising compiler that the default startup-tuned
// "-XX:TieredStopAtLevel=1" leaves out). Default: none.
func WithJVMFlags(flags ...string) Option {
	return func(c *config) { c.jvmFlags = append(c.jvmFlags, flags...) }
}

// WithQuorumRelay starts an ensemble whose members reach each other's
// quorum ports (where a leader accepts its followers) through relays that
// the harness runs on 127.0.0.1, so that Cluster.SetLag can make a
// follower lag behind its leader. Default off: members connect directly.
// Election traffic is never relayed. The local backend only; a standalone
// server has no quorum to relay.
func WithQuorumRelay() Option { return func(c *config) { c.quorumRelay = true } }
