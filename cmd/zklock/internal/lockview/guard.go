package lockview

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
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

// sessionCookie names the cookie the login form sets: an HMAC of a fixed
// text under the token, so that the token itself is never stored in the
// browser.
const sessionCookie = "zklock_ui"

func (s *Server) cookieValue() string {
	m := hmac.New(sha256.New, []byte(s.cfg.AuthToken))
	m.Write([]byte("zklock ui session"))
	return hex.EncodeToString(m.Sum(nil))
}

// equal compares secrets in constant time (their digests, so that the
// length does not show either).
func equal(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// authorized reports whether r carries the token: as a bearer token, or
// as the login form's cookie. Without a token configured, every request is.
func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.AuthToken == "" {
		return true
	}
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && equal(strings.TrimSpace(tok), s.cfg.AuthToken) {
		return true
	}
	c, err := r.Cookie(sessionCookie)
	return err == nil && equal(c.Value, s.cookie)
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

// localNext is the page to go to after the login: a path of this server,
// never another site's.
func localNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	p := s.base("Log in")
	p.Next = localNext(r.URL.Query().Get("next"))
	s.render(w, http.StatusOK, "login", p)
}

// login checks the form's token and sets the session cookie (HttpOnly,
// SameSite=Strict; Secure over TLS).
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	next := localNext(r.FormValue("next"))
	if s.cfg.AuthToken == "" || !equal(r.FormValue("token"), s.cfg.AuthToken) {
		p := s.base("Log in")
		p.Next, p.Message = next, "That is not the token of this server."
		s.render(w, http.StatusUnauthorized, "login", p)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.cookie, Path: "/", HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}
