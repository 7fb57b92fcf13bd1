package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/lockview"
)

// viewOpts are the flags of ui and ls.
type viewOpts struct {
	root        string // --root
	addr        string // ui --listen
	allowRevoke bool   // ui --allow-revoke
	watch       bool   // ls --watch
}

func registerRoot(fs *flag.FlagSet, o *verbOpts) {
	fs.StringVar(&o.view.root, "root", "/locks", "show the locks under `PATH` (walked; with --namespace, relative to it)")
}

// checkRoot refuses a root that is not an absolute znode path.
func checkRoot(o *verbOpts) error {
	if o.view.root == "/" {
		return nil
	}
	if err := zklock.ValidatePath(o.view.root); err != nil {
		return usagef("invalid --root: %v", err)
	}
	return nil
}

var uiVerb = &verb{
	name: "ui", args: "[--listen ADDR] [--root PATH] [--allow-revoke]",
	summary: "a live web view of every lock, queue and leader under a root",
	run:     runUI, pathless: true,
	flags: func(fs *flag.FlagSet, o *verbOpts) {
		registerRoot(fs, o)
		fs.StringVar(&o.view.addr, "listen", "127.0.0.1:8080", "serve HTTP on `ADDR` (host:port; port 0 picks one)")
		fs.BoolVar(&o.view.allowRevoke, "allow-revoke", false, "add a button that asks a holder to release (Curator revocation), with a confirmation")
	},
	check: func(o *verbOpts) error {
		if _, _, err := net.SplitHostPort(o.view.addr); err != nil {
			return usagef("invalid --listen %q: want host:port, e.g. 127.0.0.1:8080", o.view.addr)
		}
		return checkRoot(o)
	},
	about: "Serves one page that shows every lock directory under --root (walked, not\n" +
		"guessed): the recipe each is (from its nodes' names: Curator's, zklock's,\n" +
		"kazoo's), its holders with their id, session, fencing token and hold age, and\n" +
		"how many wait and since when; and each lock's queue and a timeline of what\n" +
		"happened while zklock ui ran. The page updates without reloading, driven by\n" +
		"ZooKeeper watches that zklock ui holds (one per directory, shared by every open\n" +
		"page). JSON of the same data is at /api/locks and /api/locks/PATH. It is\n" +
		"read-only unless --allow-revoke; it never deletes a node. It prints the URL it\n" +
		"serves, and runs until SIGINT, SIGTERM or SIGHUP (exit 0).",
	example: "zklock ui --listen 127.0.0.1:8080 --root /locks\n" +
		"zklock --namespace app ui --allow-revoke",
}

// runUI is `zklock ui`: it connects, starts the view and serves it until
// a signal. A lost connection is shown on the page, which recovers when it
// returns; failing to listen or to connect at the start exits 1.
func runUI(a *app, inv *invocation) int {
	o := inv.opts.view
	ctx, stop := a.interruptible(context.Background())
	defer stop()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		a.errorf("ui: %v", err)
		return exitError
	}
	defer ln.Close()
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
	v, err := lockview.New(s, lockview.Config{Root: o.root, Logger: a.log})
	if err != nil {
		a.errorf("ui: %v", err)
		return exitError
	}
	defer v.Close()
	h := lockview.NewServer(v, o.allowRevoke)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	mode := "read-only"
	if o.allowRevoke {
		mode = "revocation allowed"
	}
	fmt.Fprintf(a.stdout, "zklock ui: serving http://%s/ (root %s, %s)\n", ln.Addr(), o.root, mode)
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
