package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// exposeOpts are the flags of ui that say who may reach it and how.
type exposeOpts struct {
	allowedHosts   string        // --allowed-hosts
	tokenFile      string        // --auth-token-file
	tlsCert        string        // --ui-tls-cert
	tlsKey         string        // --ui-tls-key
	tlsClientCA    string        // --ui-tls-client-ca
	insecureListen bool          // --insecure-listen
	idleTimeout    time.Duration // --idle-timeout
	maxStreams     int           // --max-streams
	maxConns       int           // --max-conns
	maxConnsPer    int           // --max-conns-per-client

	// Set by checkExpose.
	token    string
	tls      *tls.Config
	loopback bool // every address --listen names is a loopback one
}

func registerExpose(fs *flag.FlagSet, e *exposeOpts) {
	fs.StringVar(&e.allowedHosts, "allowed-hosts", "", "also answer requests whose Host is one of `LIST` (comma-separated name or name:port,\n"+
		"e.g. the name a proxy forwards); any other Host than the listen address's gets 403")
	fs.StringVar(&e.tokenFile, "auth-token-file", "", "require the token in `FILE` (its first line; 16 bytes or more; the file must not be\n"+
		"readable by group or others): as \"Authorization: Bearer TOKEN\", or through the login form")
	fs.StringVar(&e.tlsCert, "ui-tls-cert", "", "serve HTTPS with the certificate in `FILE` (PEM; needs --ui-tls-key)")
	fs.StringVar(&e.tlsKey, "ui-tls-key", "", "the private key of --ui-tls-cert (PEM)")
	fs.StringVar(&e.tlsClientCA, "ui-tls-client-ca", "", "with --ui-tls-cert: require a client certificate signed by a CA in `FILE` (PEM)")
	fs.BoolVar(&e.insecureListen, "insecure-listen", false, "allow a --listen address beyond loopback without --auth-token-file or client certificates")
	fs.DurationVar(&e.idleTimeout, "idle-timeout", 2*time.Minute, "close a keep-alive connection idle for `DUR`")
	fs.IntVar(&e.maxStreams, "max-streams", 32, "serve at most `N` live pages (event streams) at once; more get 503 and retry")
	fs.IntVar(&e.maxConns, "max-conns", 256, "keep at most `N` client connections open; more get 503 and are closed")
	fs.IntVar(&e.maxConnsPer, "max-conns-per-client", 64, "of --max-conns, keep at most `N` open from one client address (an IPv6 /64 counts as one),\n"+
		"counted before the token is checked: one client cannot take every connection")
}

// checkExpose validates the exposure flags against the listen address: a
// listen beyond loopback needs a token, client certificates or
// --insecure-listen.
func checkExpose(addr string, e *exposeOpts, allowRevoke bool) error {
	if e.idleTimeout <= 0 {
		return usagef("invalid --idle-timeout %v: want a positive duration", e.idleTimeout)
	}
	if e.maxStreams < 1 {
		return usagef("invalid --max-streams %d: want 1 or more", e.maxStreams)
	}
	if e.maxConns <= e.maxStreams {
		return usagef("invalid --max-conns %d: want more than --max-streams (%d), or pages cannot load while they stream", e.maxConns, e.maxStreams)
	}
	if e.maxConnsPer < 1 {
		return usagef("invalid --max-conns-per-client %d: want 1 or more", e.maxConnsPer)
	}
	for h := range strings.SplitSeq(e.allowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			if why := hostNeverMatches(h); why != "" {
				return usagef("invalid --allowed-hosts entry %q: %s; want a name, name:port, an IP or [IPv6]:port", h, why)
			}
		}
	}
	if e.tokenFile != "" {
		tok, err := readTokenFile(e.tokenFile)
		if err != nil {
			return &usageError{msg: err.Error()}
		}
		e.token = tok
	}
	if err := e.loadTLS(); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	e.loopback = isLoopback(host)
	if e.loopback || e.token != "" || (e.tls != nil && e.tls.ClientCAs != nil) || e.insecureListen {
		return nil
	}
	what := "every lock path, holder id, session and fencing token under --root"
	if allowRevoke {
		what += ", and the button that asks holders to release"
	}
	return &usageError{msg: fmt.Sprintf("--listen %s reaches beyond loopback: it would show %s to anyone who can connect.", addr, what), hint: []string{
		"Require a token (--auth-token-file FILE), or client certificates (--ui-tls-cert, --ui-tls-key, --ui-tls-client-ca),",
		"or accept that with --insecure-listen"}}
}

// hostNeverMatches says why an --allowed-hosts entry can never equal a
// request's Host (what Go's server accepts of one), or "" if it can.
func hostNeverMatches(h string) string {
	if strings.Contains(h, "://") || strings.ContainsAny(h, "/@") {
		return "it is a URL: give only its host"
	}
	name, port := h, ""
	if n, p, err := net.SplitHostPort(h); err == nil {
		name, port = n, p
		if port == "" {
			return "the port after ':' is empty"
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port != strconv.Itoa(n) {
			return fmt.Sprintf("port %q is not a number from 1 to 65535", port)
		}
	} else if strings.HasPrefix(h, "[") {
		if !strings.HasSuffix(h, "]") {
			return "an IPv6 address in brackets needs its closing ']'"
		}
		name = h[1 : len(h)-1]
	} else if strings.Count(h, ":") > 1 {
		if net.ParseIP(h) == nil {
			return "it has colons but is no IPv6 address"
		}
		return ""
	} else if strings.Contains(h, ":") {
		return "the part after ':' is no port"
	}
	switch {
	case name == "":
		return "the name is empty"
	case strings.Contains(h, "[") && net.ParseIP(name) == nil:
		return "the part in brackets is no IPv6 address"
	case strings.ContainsAny(name, "*?"):
		return "wildcards are not supported: list each name"
	case net.ParseIP(name) != nil:
		return ""
	}
	for _, r := range strings.TrimSuffix(name, ".") {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return fmt.Sprintf("%q cannot be in a host name", r)
		}
	}
	if strings.Contains(name, "..") || strings.HasPrefix(name, ".") || name == "." {
		return "a host name has no empty labels"
	}
	return ""
}

// isLoopback reports whether host (of --listen) names only loopback
// addresses: an empty host or 0.0.0.0 is every interface.
func isLoopback(host string) bool {
	if host == "" {
		return false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	return err == nil && len(ips) > 0 && !slices.ContainsFunc(ips, func(ip net.IPAddr) bool { return !ip.IP.IsLoopback() })
}

// readTokenFile reads a token as ssh reads a private key: a regular file
// (opened without blocking: a FIFO is refused at once), owned by this
// user or root, that group and others may not read or write.
func readTokenFile(name string) (string, error) {
	b, err := readPrivate(name, maxTokenFile)
	if err != nil {
		return "", fmt.Errorf("invalid --auth-token-file: %w", err)
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	tok = strings.TrimSpace(tok)
	if len(tok) < 16 {
		return "", fmt.Errorf("invalid --auth-token-file %s: the token (its first line) has %d bytes; want 16 or more (e.g. openssl rand -hex 32)", name, len(tok))
	}
	return tok, nil
}

// maxTokenFile bounds what --auth-token-file reads.
const maxTokenFile = 64 << 10

// loadTLS builds the HTTPS configuration of --ui-tls-*.
func (e *exposeOpts) loadTLS() error {
	switch {
	case e.tlsCert == "" && e.tlsKey == "" && e.tlsClientCA == "":
		return nil
	case e.tlsCert == "" || e.tlsKey == "":
		return usagef("--ui-tls-cert and --ui-tls-key go together (and --ui-tls-client-ca needs them)")
	}
	cert, err := loadKeyPair(e.tlsCert, e.tlsKey)
	if err != nil {
		return usagef("invalid --ui-tls-cert/--ui-tls-key: %v", err)
	}
	e.tls = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if e.tlsClientCA != "" {
		b, err := readRegular(e.tlsClientCA, maxPEMFile)
		if err != nil {
			return usagef("invalid --ui-tls-client-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return usagef("invalid --ui-tls-client-ca %s: no PEM certificate in it", e.tlsClientCA)
		}
		e.tls.ClientCAs, e.tls.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return nil
}

// servedHosts are the Host values the server answers to: the names of the
// address it listens on (every interface's, and the machine's name, for
// 0.0.0.0 or ::; localhost too on loopback), with its port, and
// --allowed-hosts.
func servedHosts(listen string, ln net.Addr, e *exposeOpts) []string {
	host, _, _ := net.SplitHostPort(listen)
	tcp, _ := ln.(*net.TCPAddr)
	port := fmt.Sprint(tcp.Port)
	names := []string{host}
	switch {
	case tcp.IP.IsUnspecified():
		names = append(names, "localhost", "127.0.0.1", "::1")
		if h, err := os.Hostname(); err == nil {
			names = append(names, h)
		}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					names = append(names, n.IP.String())
				}
			}
		}
	case e.loopback:
		names = append(names, "localhost", "127.0.0.1", "::1", tcp.IP.String())
	default:
		names = append(names, tcp.IP.String())
	}
	var out []string
	for _, n := range names {
		if n != "" && !slices.Contains(out, net.JoinHostPort(n, port)) {
			out = append(out, net.JoinHostPort(n, port))
		}
	}
	for h := range strings.SplitSeq(e.allowedHosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// exposure says what the server shows and to whom, for its start.
func exposure(e *exposeOpts, allowRevoke bool) string {
	who := "anyone who can connect"
	switch {
	case e.token != "" && e.tls != nil && e.tls.ClientCAs != nil:
		who = "clients with a certificate of --ui-tls-client-ca and the token of --auth-token-file"
	case e.token != "":
		who = "clients with the token of --auth-token-file"
	case e.tls != nil && e.tls.ClientCAs != nil:
		who = "clients with a certificate of --ui-tls-client-ca"
	}
	what := "every lock path, holder id, session and fencing token under the root"
	if allowRevoke {
		what += ", and a button that asks holders to release"
	}
	return fmt.Sprintf("listening beyond loopback: it shows %s to %s", what, who)
}
