package lockview

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// hostRule is one served Host value: a name (or IP) and, if not empty, the
// one port it is served with.
type hostRule struct{ name, port string }

// loopbackHosts are served when ServerConfig.AllowedHosts is empty.
var loopbackHosts = []string{"localhost", "127.0.0.1", "[::1]"}

// parseHost splits a Host value (name, name:port, [v6], [v6]:port) and
// folds the name's case and a trailing dot.
func parseHost(h string) hostRule {
	name, port, err := net.SplitHostPort(h)
	if err != nil {
		name, port = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ""
	}
	return hostRule{name: strings.TrimSuffix(strings.ToLower(name), "."), port: port}
}

func hostRules(hosts []string) []hostRule {
	if len(hosts) == 0 {
		hosts = loopbackHosts
	}
	rules := make([]hostRule, 0, len(hosts))
	for _, h := range hosts {
		rules = append(rules, parseHost(h))
	}
	return rules
}

// hostAllowed reports whether the request's Host names this server: a
// page of another name that resolves to this address (DNS rebinding) is
// refused, whatever it asks for.
func (s *Server) hostAllowed(r *http.Request) bool {
	got := parseHost(r.Host)
	if got.name == "" {
		return false
	}
	for _, h := range s.hosts {
		if h.name == got.name && (h.port == "" || h.port == got.port) {
			return true
		}
	}
	return false
}

// sessionCookie names the cookie the login form sets: a random session
// id (never the token), valid until it expires, is logged out, or the
// token changes.
const sessionCookie = "zklock_ui"

// equal compares secrets in constant time (their digests, so that the
// length does not show either).
func equal(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// authToken is the token required now ("" with none configured, or while
// SetAuthToken has locked the server).
func (s *Server) authToken() string {
	s.authMu.RLock()
	defer s.authMu.RUnlock()
	return s.tok
}

// SetAuthToken replaces the token of a server made with one (a changed
// --auth-token-file): every login session ends, and bearer requests need
// the new token. An empty tok refuses every request until a token is set
// again. On a server made without a token it does nothing.
func (s *Server) SetAuthToken(tok string) {
	if !s.auth {
		return
	}
	s.authMu.Lock()
	changed := s.tok != tok
	s.tok = tok
	s.authMu.Unlock()
	if changed {
		s.sessions.clear()
		s.cfg.Logger.Info("zklock: ui: the token changed; every login session ended")
	}
}

// authorized reports whether r carries the token (as a bearer token) or
// a login session's cookie. Without a token configured, every request is.
// A wrong bearer token counts against the client's address, as a wrong
// login does; refused is how long it must wait when it has tried too
// often (its token is then not checked).
func (s *Server) authorized(r *http.Request) (ok bool, refused time.Duration) {
	if !s.auth {
		return true, 0
	}
	tok := s.authToken()
	if bearer, isBearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); isBearer {
		addr := ClientAddr(r.RemoteAddr)
		if d := s.throttle.wait(addr); d > 0 {
			return false, d
		}
		if tok != "" && equal(strings.TrimSpace(bearer), tok) {
			return true, 0
		}
		s.failed(addr, "bearer token")
		return false, 0
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && tok != "" && s.sessions.valid(c.Value), 0
}

// failed counts and logs a wrong token from addr.
func (s *Server) failed(addr, how string) {
	if s.throttle.fail(addr) {
		s.cfg.Logger.Warn("zklock: ui: wrong token; slowing this address down", "client", addr, "via", how,
			"allowed", fmt.Sprintf("%d at once, then one per %v", loginBurst, loginEvery))
		return
	}
	s.cfg.Logger.Warn("zklock: ui: wrong token", "client", addr, "via", how)
}

// tooOften answers a client that tried too many wrong tokens: 429, with
// when to try again.
func tooOften(w http.ResponseWriter, wait time.Duration) {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	http.Error(w, fmt.Sprintf("429 too many wrong tokens from your address: try again in %ds", secs), http.StatusTooManyRequests)
}

// unauthorized answers a request without the token: a browser's page
// request goes to the login form, anything else gets 401.
func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="zklock ui"`)
	http.Error(w, "401 unauthorized: send the token of --auth-token-file as \"Authorization: Bearer TOKEN\", or log in at /login", http.StatusUnauthorized)
}

// localNext is the page to go to after the login: a path of this server
// (with its query), parsed as a URL, never another site's. Anything else,
// a control character or space included (a browser drops tabs and
// newlines from a Location: "/\t/evil.example" would become
// "//evil.example"), is "/".
func localNext(next string) string {
	if next == "" || strings.ContainsFunc(next, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' || !unicode.IsPrint(r) }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Opaque != "" || u.User != nil || u.Host != "" || u.OmitHost || u.ForceQuery ||
		!strings.HasPrefix(u.EscapedPath(), "/") || strings.HasPrefix(u.EscapedPath(), "//") {
		return "/"
	}
	local := &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}
	out := local.String()
	if !strings.HasPrefix(out, "/") || strings.HasPrefix(out, "//") {
		return "/"
	}
	return out
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	p := s.base("Log in")
	p.Auth = false // nothing to log out of
	p.Next = localNext(r.URL.Query().Get("next"))
	s.render(w, http.StatusOK, "login", p)
}

// login checks the form's token and starts a session: its cookie is
// HttpOnly, SameSite=Strict, Secure over TLS, and expires with it. Wrong
// tokens from one address are slowed (429 once it tried too often) and
// logged.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	next := localNext(r.FormValue("next"))
	addr := ClientAddr(r.RemoteAddr)
	if d := s.throttle.wait(addr); d > 0 {
		p := s.base("Log in")
		secs := int(math.Ceil(d.Seconds()))
		p.Next, p.Message = next, fmt.Sprintf("Too many wrong tokens from your address: try again in %d s.", secs)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.render(w, http.StatusTooManyRequests, "login", p)
		return
	}
	tok := s.authToken()
	if tok == "" || !equal(r.FormValue("token"), tok) {
		if s.auth {
			s.failed(addr, "login form")
		}
		p := s.base("Log in")
		p.Next, p.Message = next, "That is not the token of this server."
		s.render(w, http.StatusUnauthorized, "login", p)
		return
	}
	id, expires := s.sessions.add()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", Expires: expires, MaxAge: int(s.cfg.SessionTTL / time.Second),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// logout ends the request's login session, clears its cookie and goes to
// the login form.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(sessionCookie); err == nil {
		s.sessions.remove(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
