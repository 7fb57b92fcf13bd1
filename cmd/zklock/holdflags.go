package main

import (
	"flag"
	"net"
	"strconv"
)

// holdOpts are the flags every holding verb has, beyond --acl and
// --revocable (flags.go).
type holdOpts struct {
	data  string // --data: the node's data (as --id)
	shell string // -c: run it with /bin/sh -c
	shSet bool   // -c was given (even empty)

	http         string // --http ADDR: serve /healthz, /leader, /metrics (endpoints.go)
	allowedHosts string // --allowed-hosts, as ui's
	insecure     bool   // --insecure-listen, as ui's
}

// shell is the shell -c runs its string with.
const shell = "/bin/sh"

func registerHoldFlags(fs *flag.FlagSet, o *verbOpts) {
	if fs.Lookup("id") == nil {
		fs.StringVar(&o.id, "id", "", "participant `ID`, stored as the node's data, which status, ls and ui show\n"+
			"(default: this host's address, as Curator)")
	}
	fs.StringVar(&o.hold.data, "data", "", "`TEXT` stored as the node's data (the same as --id; give one)")
	fs.Func("c", "run `STRING` with /bin/sh -c, as flock -c (instead of CMD)", func(v string) error {
		o.hold.shell, o.hold.shSet = v, true
		return nil
	})
	fs.StringVar(&o.hold.http, "http", "", "serve /healthz, /leader and /metrics on `ADDR` (host:port; loopback unless\n"+
		"--insecure-listen; --allowed-hosts as ui's)")
	if fs.Lookup("allowed-hosts") == nil {
		fs.StringVar(&o.hold.allowedHosts, "allowed-hosts", "", "with --http: also answer requests whose Host is one of `LIST`")
	}
	if fs.Lookup("insecure-listen") == nil {
		fs.BoolVar(&o.hold.insecure, "insecure-listen", false, "with --http: allow an address beyond loopback")
	}
}

// nodeData is the data of the nodes a holding verb creates: --id or
// --data; "" for the library's default (this host's address).
func (o *verbOpts) nodeData() string {
	if o.id != "" {
		return o.id
	}
	return o.hold.data
}

// checkHold checks the flags every holding verb has, and makes -c's string
// CMD. Its errors are usage errors.
func checkHold(inv *invocation) error {
	o := &inv.opts
	switch {
	case o.id != "" && o.hold.data != "":
		return usagef("%s: --id and --data both set the node's data: give one", inv.verb.name)
	case o.hold.shSet && len(inv.cmd) > 0:
		return usagef("%s: -c and CMD %q: give one", inv.verb.name, inv.cmd[0])
	}
	if o.hold.shSet {
		inv.cmd = []string{shell, "-c", o.hold.shell}
	}
	if o.hold.http != "" {
		host, port, err := net.SplitHostPort(o.hold.http)
		if err != nil {
			return usagef("invalid --http %q: want HOST:PORT, e.g. 127.0.0.1:9090", o.hold.http)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return usagef("invalid --http %q: bad port", o.hold.http)
		}
		if !isLoopback(host) && !o.hold.insecure {
			return usagef("--http %s reaches beyond loopback: it would show the lock path, node, token and session\n"+
				"to anyone who can connect; accept that with --insecure-listen (and name the Host a proxy forwards\n"+
				"with --allowed-hosts)", o.hold.http)
		}
	}
	return nil
}
