package main

// The command line: the flag table and the parsing of `[flags] VERB [flags]
// ARGS...` into an invocation (config.go turns the parsed values into the
// configuration).

import (
	"errors"
	"flag"
	"io"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// verbOpts holds the flags that belong to one verb.
type verbOpts struct {
	json    bool       // status; elect --listen
	leases  int        // semaphore
	id      string     // holding verbs: --id, the node's data
	requeue bool       // elect
	latch   bool       // elect: a Curator LeaderLatch participant
	listen  bool       // elect --observe: follow the leader, take no part
	health  healthOpts // elect --health-* (health.go)
	owner   string     // holding verbs: the owner id of the nodes (deadlock.go)

	deadlocks bool     // status --deadlocks (deadlock.go)
	hold      holdOpts // holding verbs (holdflags.go)

	listenAlias bool // elect --listen, the deprecated name of --observe

	view viewOpts // ui, ls (ui.go)

	revocable bool     // holding verbs: --revocable
	acl       []zk.ACL // holding verbs: --acl (nil: the library's default, world)
	aclText   string   // --acl as given

	fence fenceOpts // fence (fence.go)

	sched scheduleOpts // elect --every (schedule.go)
}

// invocation is a parsed command line.
type invocation struct {
	cfg  config
	verb *verb
	path string   // the lock path, after the /locks/ rule
	cmd  []string // CMD [ARG...]; empty: hold until a signal
	opts verbOpts
}

// setting is a global flag that takes a value, with its environment variable
// (if any) and default, applied to config once the source is known.
type setting struct {
	flag, env, def, meta, help string
	apply                      func(c *config, v string) error
}

var settings = []setting{
	{"servers", "ZKLOCK_SERVERS", "127.0.0.1:2181", "LIST", "comma-separated host:port list", applyServers},
	{"namespace", "ZKLOCK_NAMESPACE", "", "NS", "root every PATH under /NS, as a Curator client built with namespace(NS);\n" +
		"PATH, node paths and status are then relative to it (e.g. app, or app/sub)", applyNamespace},
	{"session-timeout", "ZKLOCK_SESSION_TIMEOUT", "10s", "DUR", "ZooKeeper session timeout asked for (100ms to 596h; the server\n" +
		"negotiates it into its range, 4s to 40s by default)", applySessionTimeout},
	{"timeout", "ZKLOCK_TIMEOUT", "0", "DUR", "give up after DUR (connecting and waiting); 0 waits forever",
		durationSetting(func(c *config) *time.Duration { return &c.timeout }, true)},
	{"kill-grace", "", "5s", "DUR", "on lock loss: SIGTERM to the child, SIGKILL after DUR",
		durationSetting(func(c *config) *time.Duration { return &c.killGrace }, true)},
	{"auth", envAuth, "", "SCHEME:CRED", "ZooKeeper auth, e.g. digest:user:password (visible in ps: prefer --auth-file)", applyAuth},
	{"auth-file", "ZKLOCK_AUTH_FILE", "", "FILE", "read the ZooKeeper auth SCHEME:CRED from FILE, which only its owner\n" +
		"may read or write (as ssh checks its keys)", applyAuthFile},
	{"on-unreachable", "ZKLOCK_ON_UNREACHABLE", onUnreachableFail, "fail|run",
		"no server could be reached (no connection, or no answer to the handshake)\n" +
			"within --timeout (10s if 0): fail exits 1;\n" +
			"run runs CMD anyway, unlocked, with ZKLOCK_UNLOCKED=1 and no token (efficiency locks only).\n" +
			"Anything after a server answered (a reply over --max-reply, a broken protocol,\n" +
			"refused credentials) and a refused TLS handshake are errors: they always fail", applyOnUnreachable},
	{"max-reply", "ZKLOCK_MAX_REPLY", "", "SIZE", "the longest reply read from a server (default 64MiB); a longer one fails\n" +
		"its request (exit 1, naming the node and the size), never the session", applyMaxReply},
	{"loss-limit", "ZKLOCK_LOSS_LIMIT", "", "DUR",
		"holding verbs: the lock counts as lost once the connection has been suspended\n" +
			"for DUR (from when the server was last heard); 0: at the first suspension;\n" +
			"negative (e.g. -1s): only when the session expires (use fencing).\n" +
			"Default: elect 0; lock, read, write, semaphore 2/3 of the session timeout", applyLossLimit},
	{"log-format", "ZKLOCK_LOG_FORMAT", logFormatText, "text|json", "how zklock logs what it does and why it exits, on stderr:\n" +
		"text (zklock: MESSAGE key=value...) or json (one object a line); usage errors stay plain", applyLogFormat},
	{"log-level", "ZKLOCK_LOG_LEVEL", "", "LEVEL", "debug, info, warn or error (default warn; info with -v)", applyLogLevel},
	{"conflict-exit-code", "ZKLOCK_CONFLICT_EXIT_CODE", "3", "N", "exit status when the lock is not acquired (--try, --timeout, a signal\n" +
		"while waiting), as flock -E; 0 to 255", exitCodeSetting(func(c *config) *int { return &c.conflictExit })},
	{"lost-exit-code", "ZKLOCK_LOST_EXIT_CODE", "4", "N", "exit status when the lock is lost (or revoked) while held; 0 to 255",
		exitCodeSetting(func(c *config) *int { return &c.lostExit })},
	{"tls-ca", "ZKLOCK_TLS_CA", "", "FILE", "speak TLS (ZooKeeper's secureClientPort); trust the CA certificates in FILE (PEM)\n" +
		"instead of the system's", func(c *config, v string) error { c.tlsCA = v; return nil }},
	{"tls-cert", "ZKLOCK_TLS_CERT", "", "FILE", "speak TLS; present the client certificate in FILE (PEM; needs --tls-key)",
		func(c *config, v string) error { c.tlsCert = v; return nil }},
	{"tls-key", "ZKLOCK_TLS_KEY", "", "FILE", "the private key of --tls-cert (PEM)",
		func(c *config, v string) error { c.tlsKey = v; return nil }},
	{"tls-server-name", "ZKLOCK_TLS_SERVER_NAME", "", "NAME", "speak TLS; check every server's certificate against NAME\n" +
		"(default: each against the host given for it in --servers)",
		func(c *config, v string) error { c.tlsServerName = v; return nil }},
}

// rawValue is a flag.Value that keeps the text and whether it was given.
type rawValue struct {
	text string
	set  bool
}

func (r *rawValue) String() string     { return r.text }
func (r *rawValue) Set(s string) error { r.text, r.set = s, true; return nil }

// globals are the destinations of the global flags, shared by the flag set
// before the verb and the one after it, so either place works.
type globals struct {
	raw     map[string]*rawValue
	try     bool
	verbose bool
	version bool
}

func (g *globals) register(fs *flag.FlagSet) {
	for _, s := range settings {
		fs.Var(g.raw[s.flag], s.flag, s.help)
	}
	fs.BoolVar(&g.try, "try", g.try, "do not wait: take the lock only if it is free now")
	fs.BoolVar(&g.verbose, "v", g.verbose, "log state changes (connected, suspended, lost) to stderr")
	fs.BoolVar(&g.version, "version", g.version, "print zklock's version and exit")
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by the caller, the usage by -h
	fs.Usage = func() {}
	return fs
}

// errHelp asks for the usage on stdout and exit 0.
var errHelp = errors.New("help requested")

// errVersion asks for the version on stdout and exit 0.
var errVersion = errors.New("version requested")

// verbHelp asks for one verb's usage; it matches errHelp under errors.Is.
type verbHelp struct{ verb *verb }

func (h *verbHelp) Error() string { return "help requested for " + h.verb.name }
func (h *verbHelp) Unwrap() error { return errHelp }

// registerVerbFlags defines v's own flags (those beyond the global ones) on
// fs, with o as their destination.
func registerVerbFlags(fs *flag.FlagSet, v *verb, o *verbOpts) {
	if v.flags != nil {
		v.flags(fs, o)
	}
	if v.holds {
		fs.BoolVar(&o.revocable, "revocable", false, "end CMD when revocation is requested (zklock revoke)")
		fs.Func("acl", "`ACL` of the nodes zklock creates: creator, creator,world:read, world (default), scheme:id:rwcda,...;\n"+
			"an entry in double quotes may hold commas: 'creator,\"x509:CN=ops,O=Example:rwcda\"'", func(v string) error {
			acl, err := parseACLFlag(v)
			if err != nil {
				return err
			}
			o.acl, o.aclText = acl, v
			return nil
		})
	}
	if v.holds {
		registerHoldFlags(fs, o)
	}
}

// verbFlags returns v's own flags, in name order.
func verbFlags(v *verb) []*flag.Flag {
	fs := newFlagSet(v.name)
	registerVerbFlags(fs, v, &verbOpts{})
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}

// parseArgs parses `[flags] VERB [flags] ARGS...`. Global flags and the
// verb's own flags go before the verb or after it; for a holding verb,
// flags may also follow PATH, and the first argument after PATH that is not
// a flag (or everything after "--") starts CMD. A verb's flag given before
// the verb is refused if the verb has no such flag.
func parseArgs(args []string, getenv func(string) string) (*invocation, error) {
	g := &globals{raw: map[string]*rawValue{}}
	for _, s := range settings {
		g.raw[s.flag] = &rawValue{text: s.def}
	}
	fs := newFlagSet("zklock")
	g.register(fs)
	// Every verb's flags, so that they may come before the verb; their
	// values are replayed onto the verb's own flag set below.
	owners := map[string][]string{}
	for _, v := range verbs {
		for _, f := range verbFlags(v) {
			if fs.Lookup(f.Name) == nil {
				fs.Var(&rawValue{text: f.DefValue}, f.Name, f.Usage)
				if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
					fs.Lookup(f.Name).Value = &rawBool{rawValue{text: f.DefValue}}
				}
			}
			owners[f.Name] = append(owners[f.Name], v.name)
		}
	}
	var allFlags []string
	fs.VisitAll(func(f *flag.Flag) { allFlags = append(allFlags, f.Name) })
	// misplaced makes the error of a flag that is not defined where it
	// was given the same before the verb and after it.
	misplaced := func(err error, v *verb) error {
		var ue *usageError
		if !errors.As(err, &ue) {
			return err
		}
		name, ok := strings.CutPrefix(ue.msg, "flag provided but not defined: -")
		if !ok {
			return err
		}
		if v != nil && len(owners[name]) > 0 {
			return usagef("--%s is not a flag of %s (it is one of %s)", name, v.name, strings.Join(owners[name], ", "))
		}
		return usagef("%s%s", ue.msg, suggest(name, allFlags, func(s string) string { return "--" + s }))
	}
	if err := parseFlags(fs, args); err != nil {
		return nil, misplaced(err, nil)
	}
	if g.version {
		return nil, errVersion
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return nil, usagef("missing verb")
	}
	if rest[0] == "help" { // zklock help [VERB]
		switch {
		case len(rest) == 1:
			return nil, errHelp
		case len(rest) > 2:
			return nil, usagef("help: unexpected argument %q (zklock help [VERB])", rest[2])
		case lookupVerb(rest[1]) == nil:
			return nil, usagef("help: unknown verb %q%s (verbs: %s)", rest[1], suggestVerb(rest[1]), verbNames())
		}
		return nil, &verbHelp{lookupVerb(rest[1])}
	}
	v := lookupVerb(rest[0])
	if v == nil {
		return nil, usagef("unknown verb %q%s (verbs: %s)", rest[0], suggestVerb(rest[0]), verbNames())
	}
	if !v.available() {
		return nil, usagef("verb %q is not yet available in this version of zklock", v.name)
	}
	inv := &invocation{verb: v}
	vfs := newFlagSet("zklock " + v.name)
	g.register(vfs)
	registerVerbFlags(vfs, v, &inv.opts)
	var early error
	fs.Visit(func(f *flag.Flag) {
		if _, isVerbFlag := owners[f.Name]; !isVerbFlag || early != nil {
			return
		}
		if vfs.Lookup(f.Name) == nil {
			early = usagef("--%s is not a flag of %s (it is one of %s)", f.Name, v.name, strings.Join(owners[f.Name], ", "))
			return
		}
		if err := vfs.Set(f.Name, f.Value.String()); err != nil {
			early = usagef("invalid value %q for --%s: %v", f.Value.String(), f.Name, err)
		}
	})
	if early != nil {
		return nil, early
	}
	path, cmd, err := splitVerbArgs(vfs, v, &inv.opts, rest[1:])
	switch {
	case errors.Is(err, errHelp):
		return nil, &verbHelp{v}
	case g.version:
		return nil, errVersion
	case err != nil:
		return nil, misplaced(err, v)
	}
	if inv.path, err = lockPath(path); err != nil && !v.pathless { // a pathless verb has none
		return nil, err
	}
	inv.cmd = cmd
	if v.holds {
		if err := checkHold(inv); err != nil {
			return nil, err
		}
	}
	if inv.cfg, err = configure(g, getenv, v, &inv.opts); err != nil {
		return nil, err
	}
	return inv, nil
}

// rawBool is a rawValue that the flag package treats as a boolean flag
// (given alone, it means true).
type rawBool struct{ rawValue }

func (r *rawBool) IsBoolFlag() bool { return true }

// splitVerbArgs parses the verb's flags around its one path argument and
// returns the path and, for a holding verb, CMD.
func splitVerbArgs(fs *flag.FlagSet, v *verb, o *verbOpts, args []string) (string, []string, error) {
	if err := parseFlags(fs, args); err != nil {
		return "", nil, err
	}
	rest := fs.Args()
	if v.operands { // its own arguments, in place of CMD, among its flags
		var ops []string
		for ; len(rest) > 0; rest = fs.Args() {
			ops = append(ops, rest[0])
			if err := parseFlags(fs, rest[1:]); err != nil {
				return "", nil, err
			}
		}
		return "", ops, nil
	}
	if v.pathless && len(rest) > 0 {
		return "", nil, usagef("%s: unexpected argument %q (it takes no PATH; see --root)", v.name, rest[0])
	}
	if len(rest) == 0 && v.defaultPath != nil && v.defaultPath(o) != "" {
		return v.defaultPath(o), nil, nil
	}
	if len(rest) == 0 && !v.pathless {
		return "", nil, usagef("%s: missing PATH", v.name)
	}
	if v.pathless {
		return "", nil, nil
	}
	path := rest[0]
	if err := parseFlags(fs, rest[1:]); err != nil {
		return "", nil, err
	}
	rest = fs.Args()
	if v.holds {
		if len(rest) == 0 {
			return path, nil, nil // no CMD: hold until a signal
		}
		return path, rest, nil
	}
	if len(rest) > 0 {
		return "", nil, usagef("%s: unexpected argument %q", v.name, rest[0])
	}
	return path, nil, nil
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return errHelp
	}
	return usagef("%v", err)
}
