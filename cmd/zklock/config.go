package main

// Turning the parsed flags into the configuration of the session and the
// lock (flags.go parses them): each setting from its flag, else its
// environment variable, else its default, checked before anything connects.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// config is the resolved global settings: flag, else environment, else default.
type config struct {
	servers        []string
	namespace      string // --namespace: zklock.WithNamespace; "" for none
	sessionTimeout time.Duration
	timeout        time.Duration // 0: wait forever
	try            bool
	killGrace      time.Duration
	auth           *authSpec // nil: no auth
	onUnreachable  string    // onUnreachableFail or onUnreachableRun
	verbose        bool

	// The log stream (logging.go): --log-format, and --log-level when
	// logLevelSet (else level's default).
	logFormat   string
	logLevel    slog.Level
	logLevelSet bool

	// conflictExit and lostExit are the exit statuses of "not acquired"
	// and "lost" (--conflict-exit-code, --lost-exit-code; exit.go).
	conflictExit, lostExit int

	// lossLimit is --loss-limit (zklock.WithLossLimit) when lossSet, else
	// the verb's default; without either, the library's default.
	lossLimit time.Duration
	lossSet   bool

	// TLS files (--tls-ca, --tls-cert, --tls-key) and --tls-server-name;
	// tls is the client configuration built from them, nil for plaintext.
	tlsCA, tlsCert, tlsKey, tlsServerName string

	maxReply int // --max-reply (zklock.WithMaxReply); 0: the library's default
	tls      *tls.Config
}

type authSpec struct {
	scheme string
	cred   []byte
}

const (
	onUnreachableFail = "fail"
	onUnreachableRun  = "run"
)

// configure resolves the global settings for verb v and checks them against
// each other and against v's own flags o. Its errors are usage errors:
// nothing has connected yet.
func configure(g *globals, getenv func(string) string, v *verb, o *verbOpts) (config, error) {
	c, err := resolve(g, getenv)
	if err != nil {
		return config{}, err
	}
	if !c.lossSet && v.lossDefault != nil {
		c.lossLimit, c.lossSet = *v.lossDefault, true
	}
	if c.tls, err = tlsConfig(&c); err != nil {
		return config{}, err
	}
	if c.auth == nil && slices.ContainsFunc(o.acl, func(a zk.ACL) bool { return a.Scheme == "auth" }) {
		return config{}, usagef("--acl %s gives the creator's credentials every right: it needs --auth, --auth-file or ZKLOCK_AUTH", o.aclText)
	}
	return c, nil
}

// resolve applies each setting from its flag, else its environment
// variable (an empty one counts as unset), else its default.
func resolve(g *globals, getenv func(string) string) (config, error) {
	c := config{try: g.try, verbose: g.verbose}
	for _, s := range settings {
		r := g.raw[s.flag]
		val, from := r.text, "--"+s.flag
		if !r.set && s.env != "" {
			if e := getenv(s.env); e != "" {
				val, from = e, s.env
			}
		}
		if err := s.apply(&c, val); err != nil {
			if s.flag == "auth" { // never print credentials
				return config{}, usagef("invalid %s: %v", from, err)
			}
			return config{}, usagef("invalid %s %q: %v", from, val, err)
		}
	}
	return c, nil
}

func applyServers(c *config, v string) error {
	c.servers = nil
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.servers = append(c.servers, s)
		}
	}
	if len(c.servers) == 0 {
		return errors.New("no servers")
	}
	for _, s := range c.servers {
		if err := zklock.ValidateServer(s); err != nil { // as Connect checks it, before anything connects
			msg := strings.TrimPrefix(err.Error(), zklock.ErrInvalidArgument.Error()+": server ")
			return errors.New(strings.Replace(msg, "want host:port", "want HOST:PORT", 1))
		}
	}
	return nil
}

// applySessionTimeout parses --session-timeout and checks it against the
// range zklock.Connect accepts: outside it, a usage error, never an
// unreachable ZooKeeper.
func applySessionTimeout(c *config, v string) error {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return errors.New("want a duration such as 500ms or 10s")
	case d < zklock.MinSessionTimeout || d > zklock.MaxSessionTimeout:
		return fmt.Errorf("want %v to %v (ZooKeeper's servers then negotiate it into their range, 4s to 40s by default)",
			zklock.MinSessionTimeout, zklock.MaxSessionTimeout)
	}
	c.sessionTimeout = d
	return nil
}

// applyMaxReply parses --max-reply: bytes, or a whole number of KiB, MiB
// or GiB ("64MiB"); empty, the library's default.
func applyMaxReply(c *config, v string) error {
	if v == "" {
		return nil
	}
	num, mult := v, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 1 || n > math.MaxInt32/mult || n*mult < 1<<10 {
		return errors.New("want a size from 1KiB to 2GiB, in bytes or with KiB, MiB or GiB (e.g. 64MiB)")
	}
	c.maxReply = int(n * mult)
	return nil
}

// durationSetting parses a Go duration ("500ms", "10s", or "0"); zeroOK says
// whether 0 is allowed. Negative durations never are.
func durationSetting(field func(*config) *time.Duration, zeroOK bool) func(*config, string) error {
	return func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return errors.New("want a duration such as 500ms or 10s")
		case d < 0 && zeroOK:
			return errors.New("want a duration of 0 or more")
		case d <= 0 && !zeroOK:
			return errors.New("want a positive duration")
		}
		*field(c) = d
		return nil
	}
}

// applyNamespace checks a namespace as zklock.Connect does: a bad one is a
// usage error before anything connects.
func applyNamespace(c *config, v string) error {
	if err := zklock.ValidateNamespace(v); err != nil {
		return err
	}
	c.namespace = v
	return nil
}

func applyAuth(c *config, v string) error {
	c.auth = nil
	if v == "" {
		return nil
	}
	a, err := parseAuth(v)
	c.auth = a
	return err
}

// parseAuth parses SCHEME:CRED; its errors never quote the credentials.
func parseAuth(v string) (*authSpec, error) {
	scheme, cred, ok := strings.Cut(v, ":")
	if !ok || scheme == "" {
		return nil, errors.New("want SCHEME:CRED, e.g. digest:user:password")
	}
	return &authSpec{scheme: scheme, cred: []byte(cred)}, nil
}

// tlsConfig builds the TLS client configuration from the --tls-* flags:
// nil when none is given (plaintext). A file that cannot be read or parsed
// is a usage error, so nothing connects with half a configuration.
func tlsConfig(c *config) (*tls.Config, error) {
	if c.tlsCA == "" && c.tlsCert == "" && c.tlsKey == "" && c.tlsServerName == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.tlsServerName}
	if c.tlsCA != "" {
		b, err := readRegular(c.tlsCA, maxPEMFile)
		if err != nil {
			return nil, usagef("invalid --tls-ca: %v", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(b) {
			return nil, usagef("invalid --tls-ca %s: no PEM certificate in it", c.tlsCA)
		}
	}
	switch {
	case c.tlsCert != "" && c.tlsKey != "":
		cert, err := loadKeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return nil, usagef("invalid --tls-cert/--tls-key: %v", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	case c.tlsCert != "":
		return nil, usagef("--tls-cert needs --tls-key")
	case c.tlsKey != "":
		return nil, usagef("--tls-key needs --tls-cert")
	}
	return tc, nil
}

// applyLossLimit parses --loss-limit: any Go duration, negative included;
// empty leaves the verb's default.
func applyLossLimit(c *config, v string) error {
	if v == "" {
		c.lossLimit, c.lossSet = 0, false
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return errors.New("want a duration such as 0, 3s or -1s")
	}
	c.lossLimit, c.lossSet = d, true
	return nil
}

func applyOnUnreachable(c *config, v string) error {
	if v != onUnreachableFail && v != onUnreachableRun {
		return fmt.Errorf("want %s or %s", onUnreachableFail, onUnreachableRun)
	}
	c.onUnreachable = v
	return nil
}

// lockPath applies the PATH rule (no leading "/": under /locks/) and checks
// the result with zklock.ValidatePath, the check every recipe runs, so a bad
// PATH is a usage error (exit 2) before anything connects.
func lockPath(p string) (string, error) {
	if p == "" {
		return "", usagef("empty PATH")
	}
	full := p
	if !strings.HasPrefix(p, "/") {
		full = "/locks/" + p
	}
	if err := zklock.ValidatePath(full); err != nil {
		if full != p { // the reason may point into the full path
			return "", usagef("invalid PATH %q (znode %q): %s", p, full, pathReason(err))
		}
		return "", usagef("invalid PATH %q: %s", p, pathReason(err))
	}
	return full, nil
}

// pathReason is why zklock.ValidatePath refused a path: the text after the
// quoted path in its message ("zklock: invalid path \"/a//b\": empty
// element (//)"), or the whole message if it has no such part.
func pathReason(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, `": `); i >= 0 {
		return msg[i+len(`": `):]
	}
	return msg
}
