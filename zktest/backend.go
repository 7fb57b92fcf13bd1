package zktest

import (
	"io"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Controller is what a backend outside this package (such as the
// testcontainers-go backend in zktest/containers) implements so that
// NewCluster can give its members the Cluster API. Each method acts on
// member i (0-based, in range) and blocks until done; see Cluster.Kill,
// Stop, Start, Pause and Resume for the expected semantics. Live reports
// whether i is started and not paused, i.e. expected to answer.
type Controller interface {
	Kill(i int) error
	Stop(i int) error
	Start(i int) error
	Pause(i int) error
	Resume(i int) error
	Live(i int) bool
}

// Settings is the resolved form of a list of Options, for backends outside
// this package. It is a copy: changing it changes nothing.
type Settings struct {
	Servers        int               // WithServers
	Tick           time.Duration     // WithTickTime
	ContainerCheck time.Duration     // WithContainerCheckInterval
	Fsync          bool              // WithFsync
	LogOutput      io.Writer         // WithLogOutput (nil: discard)
	StartTimeout   time.Duration     // WithStartTimeout
	Props          map[string]string // WithSystemProperty
	Heap           string            // WithHeap
	JVMFlags       []string          // WithJVMFlags
	// InitLimit and SyncLimit are the quorum limits, in ticks, that the
	// local backend derives from Tick (see WithTickTime).
	InitLimit, SyncLimit int
}

// Resolve applies opts to the defaults of a Cluster of servers members
// (as Start does with 1 and StartEnsemble with 3).
func Resolve(servers int, opts ...Option) Settings {
	cfg := defaultConfig(servers)
	for _, o := range opts {
		o(&cfg)
	}
	s := Settings{Servers: cfg.servers, Tick: cfg.tick, ContainerCheck: cfg.containerCheck, Fsync: cfg.fsync,
		LogOutput: cfg.logOutput, StartTimeout: cfg.startTimeout, Props: maps.Clone(cfg.props), Heap: cfg.heap,
		JVMFlags: append([]string(nil), cfg.jvmFlags...)}
	s.InitLimit, s.SyncLimit = limits(cfg.tick)
	return s
}

// NewCluster returns a Cluster over the members at servers (client
// addresses, in member order) that ctl controls, for a backend outside
// this package; backend names it (Cluster.Backend). Everything else
// (WaitServing, Leader, FourLetter, Expire, Connect, Dialer, Proxy, Start's
// waiting) works as for the built-in backends. opts are the Options the
// backend was started with (only the start timeout is used here). The
// backend remains responsible for its members' clean-up.
func NewCluster(backend string, servers []string, ctl Controller, opts ...Option) *Cluster {
	cfg := defaultConfig(len(servers))
	for _, o := range opts {
		o(&cfg)
	}
	c := &Cluster{cfg: cfg, servers: append([]string(nil), servers...), book: newSessionBook(), backend: backend}
	if ctl != nil {
		c.ctl = controllerAdapter{ctl}
	}
	return c
}

type controllerAdapter struct{ c Controller }

func (a controllerAdapter) kill(i int) error   { return a.c.Kill(i) }
func (a controllerAdapter) stop(i int) error   { return a.c.Stop(i) }
func (a controllerAdapter) start(i int) error  { return a.c.Start(i) }
func (a controllerAdapter) pause(i int) error  { return a.c.Pause(i) }
func (a controllerAdapter) resume(i int) error { return a.c.Resume(i) }
func (a controllerAdapter) live(i int) bool    { return a.c.Live(i) }

// JVMArgs returns the server JVM's options for s: heap and GC settings,
// s.JVMFlags, then the system properties every zktest server runs with
// (four-letter words, container reaping at s.ContainerCheck, logging),
// extra, and s.Props, later ones winning, as sorted -D flags.
func JVMArgs(s Settings, extra map[string]string) []string {
	props := map[string]string{
		"zookeeper.4lw.commands.whitelist":       "*",
		"zookeeper.admin.enableServer":           "false",
		"zookeeper.extendedTypesEnabled":         "true",
		"zookeeper.jmx.log4j.disable":            "true",
		"znode.container.checkIntervalMs":        strconv.Itoa(max(int(s.ContainerCheck/time.Millisecond), 1)),
		"java.net.preferIPv4Stack":               "true",
		"org.slf4j.simpleLogger.showDateTime":    "true",
		"org.slf4j.simpleLogger.dateTimeFormat":  "HH:mm:ss.SSS",
		"org.slf4j.simpleLogger.defaultLogLevel": "warn",
	}
	if s.LogOutput != nil {
		props["org.slf4j.simpleLogger.defaultLogLevel"] = "info"
	}
	maps.Copy(props, extra)
	maps.Copy(props, s.Props)
	args := []string{"-Xmx" + s.Heap, "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:-UsePerfData"}
	args = append(args, s.JVMFlags...)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		args = append(args, "-D"+k+"="+props[k])
	}
	return args
}
