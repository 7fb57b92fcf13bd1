package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
)

// viewOpts are the flags of ui and ls.
type viewOpts struct {
	root        string // --root
	maxDirs     int    // --max-dirs
	addr        string // ui --listen
	allowRevoke bool   // ui --allow-revoke
	watch       bool   // ls --watch
	expose      exposeOpts
	members     string        // ui --members
	pollEvery   time.Duration // ui --ensemble-poll
	history     time.Duration // ui --history
}

// registerRoot adds the flags of what ui and ls walk: --root, --max-dirs.
func registerRoot(fs *flag.FlagSet, o *verbOpts) {
	fs.StringVar(&o.view.root, "root", "/locks", "show the locks under `PATH` (walked; with --namespace, relative to it)")
	fs.IntVar(&o.view.maxDirs, "max-dirs", lockview.DefaultMaxDirs, "watch at most `N` directories under --root, the first by name\n"+
		"(each costs a listing and a watch); the rest are counted as not shown")
}

// checkRoot refuses a root that is not an absolute znode path, and a
// --max-dirs under 1.
func checkRoot(o *verbOpts) error {
	if o.view.maxDirs < 1 {
		return usagef("invalid --max-dirs %d: want 1 or more", o.view.maxDirs)
	}
	if o.view.root == "/" {
		return nil
	}
	if err := zklock.ValidatePath(o.view.root); err != nil {
		return usagef("invalid --root: %v", err)
	}
	return nil
}

var uiVerb = &verb{
	name: "ui", args: "[--listen ADDR] [--root PATH] [--max-dirs N] [--allow-revoke] [--auth-token-file FILE] [--allowed-hosts LIST]",
	summary: "a live web view of every lock, queue and leader under a root",
	run:     runUI, pathless: true,
	flags: func(fs *flag.FlagSet, o *verbOpts) {
		registerRoot(fs, o)
		fs.StringVar(&o.view.addr, "listen", "127.0.0.1:8080", "serve HTTP on `ADDR` (host:port; port 0 picks one)")
		fs.BoolVar(&o.view.allowRevoke, "allow-revoke", false, "add a button that asks a holder to release (Curator revocation), with a confirmation")
		registerExpose(fs, &o.view.expose)
		fs.StringVar(&o.view.members, "members", "", "ask the ensemble members in `LIST` (comma-separated host:port) for srvr and cons\n"+
			"(default: --servers; give it when --servers is a proxy or a load balancer)")
		fs.DurationVar(&o.view.pollEvery, "ensemble-poll", 10*time.Second, "ask each member for srvr and cons every `DUR`")
		fs.DurationVar(&o.view.history, "history", 30*time.Minute, "draw each lock's history over the last `DUR` (kept: 200 events per lock, 50,000 in all)")
	},
	check: func(o *verbOpts) error {
		if _, _, err := net.SplitHostPort(o.view.addr); err != nil {
			return usagef("invalid --listen %q: want host:port, e.g. 127.0.0.1:8080", o.view.addr)
		}
		if err := checkRoot(o); err != nil {
			return err
		}
		if o.view.history < time.Minute {
			return usagef("invalid --history %v: want 1m or more", o.view.history)
		}
		if o.view.pollEvery < time.Second {
			return usagef("invalid --ensemble-poll %v: want 1s or more", o.view.pollEvery)
		}
		for m := range strings.SplitSeq(o.view.members, ",") {
			if _, _, err := net.SplitHostPort(strings.TrimSpace(m)); o.view.members != "" && err != nil {
				return usagef("invalid --members entry %q: want host:port", m)
			}
		}
		return checkExpose(o.view.addr, &o.view.expose, o.view.allowRevoke)
	},
	about: "Serves one page that shows every lock directory under --root (walked, not\n" +
		"guessed): the recipe each is (from its nodes' names: Curator's, zklock's,\n" +
		"kazoo's), its holders with their id, session, client address (the members'\n" +
		"cons), fencing token and hold age, and how many wait and since when; each\n" +
		"lock's queue, its history drawn as a timeline (one row per participant) and\n" +
		"the events seen while zklock ui ran; and the ensemble's health (srvr) on every\n" +
		"page. The page updates without reloading, driven by\n" +
		"ZooKeeper watches that zklock ui holds (one per directory, shared by every open\n" +
		"page). JSON of the same data is at /api/locks and /api/locks/PATH. It is\n" +
		"read-only unless --allow-revoke; it never deletes a node. It prints the URL it\n" +
		"serves, and runs until SIGINT, SIGTERM or SIGHUP (exit 0).\n\n" +
		"It answers only requests whose Host names its listen address (localhost too\n" +
		"on loopback) or one of --allowed-hosts: others get 403. A --listen address\n" +
		"beyond loopback (0.0.0.0:8080, :8080, a LAN address) is refused (exit 2)\n" +
		"unless --auth-token-file, client certificates (--ui-tls-*) or\n" +
		"--insecure-listen; it then prints what it exposes. Node data is shown cut\n" +
		"to its first 256 bytes, with its size.",
	example: "zklock ui --listen 127.0.0.1:8080 --root /locks\n" +
		"zklock --namespace app ui --allow-revoke\n" +
		"zklock ui --listen :8443 --auth-token-file /etc/zklock/ui-token --ui-tls-cert ui.pem --ui-tls-key ui-key.pem",
}

// tokenPoll is how often zklock ui reads --auth-token-file again.
const tokenPoll = time.Second

// watchTokenFile reads the token file every tokenPoll until ctx ends and
// hands set each change: a new token (which ends every login session), or
// "" while the file cannot be read or holds no valid token (every request
// is then refused; said once on stderr).
func (a *app) watchTokenFile(ctx context.Context, name, tok string, set func(string)) {
	t := time.NewTicker(tokenPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		next, err := readTokenFile(name)
		switch {
		case err != nil && tok != "":
			a.errorf("ui: %v: refusing every request until it holds a valid token", err)
		case err == nil && next != tok:
			a.log.Info("zklock: ui: --auth-token-file changed: every login session ended", "file", name)
		}
		if next != tok {
			tok = next
			set(tok)
		}
	}
}

// runUI is `zklock ui`: it connects, starts the view and serves it until
// a signal. A lost connection is shown on the page, which recovers when it
// returns; failing to listen or to connect at the start exits 1.
func runUI(a *app, inv *invocation) int {
	o := inv.opts.view
	ctx, stop := a.interruptible(context.Background())
	defer stop()
	e := &o.expose
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		a.errorf("ui: %v", err)
		return exitError
	}
	defer ln.Close()
	hosts := servedHosts(o.addr, ln.Addr(), e)
	scheme := "http"
	ln = &capListener{Listener: ln, max: int64(e.maxConns), perClient: int64(e.maxConnsPer), answer: e.tls == nil}
	if e.tls != nil {
		ln, scheme = tls.NewListener(ln, e.tls), "https"
	}
	s, err := a.connect(ctx, &inv.cfg)
	if err != nil {
		var sig *interrupted
		if errors.As(err, &sig) {
			return exitOK
		}
		a.errorf("ui: %v", err)
		return exitCode(err)
	}
	defer s.Close()
	members := inv.cfg.servers
	if o.members != "" {
		members = nil
		for m := range strings.SplitSeq(o.members, ",") {
			members = append(members, strings.TrimSpace(m))
		}
	}
	v, err := lockview.New(s, lockview.Config{Root: o.root, MaxDirs: o.maxDirs, Logger: a.log, Members: members, TLS: inv.cfg.tls, PollEvery: o.pollEvery, History: o.history})
	if err != nil {
		a.errorf("ui: %v", err)
		return exitError
	}
	defer v.Close()
	h := lockview.NewServer(v, lockview.ServerConfig{AllowRevoke: o.allowRevoke, AllowedHosts: hosts, AuthToken: e.token, MaxStreams: e.maxStreams,
		Logger: a.log})
	if e.tokenFile != "" {
		watching := make(chan struct{})
		go func() {
			defer close(watching)
			a.watchTokenFile(ctx, e.tokenFile, e.token, h.SetAuthToken)
		}()
		defer func() { stop(); <-watching }()
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute,
		IdleTimeout: e.idleTimeout, MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelDebug)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	mode := "read-only"
	if o.allowRevoke {
		mode = "revocation allowed"
	}
	fmt.Fprintf(a.stdout, "zklock ui: serving %s://%s/ (root %s, %s)\n", scheme, ln.Addr(), o.root, mode)
	if !e.loopback {
		fmt.Fprintf(a.stdout, "zklock ui: %s\n", exposure(e, o.allowRevoke))
	}
	fmt.Fprintf(a.stdout, "zklock ui: answers to Host %s\n", strings.Join(hosts, ", "))
	select {
	case <-ctx.Done():
	case err := <-served:
		a.errorf("ui: %v", err)
		return exitError
	}
	h.Close()
	shut, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	a.log.Info("zklock: ui stopped")
	return exitOK
}
