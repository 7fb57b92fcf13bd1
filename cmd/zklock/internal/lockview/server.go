package lockview

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed assets
var assets embed.FS

// ServerConfig is what a Server serves, to whom, and how many streams.
type ServerConfig struct {
	// AllowRevoke adds the revocation button and its route.
	AllowRevoke bool
	// AllowedHosts are the Host header values served: "name" (any port)
	// or "name:port" (IPv6 in brackets). Empty: localhost, 127.0.0.1 and
	// [::1], any port. A request with another Host gets 403 on every
	// route, before routing (DNS rebinding).
	AllowedHosts []string
	// AuthToken, if not empty, is required of every request but the
	// login form's, the logout's and the static files': as
	// "Authorization: Bearer TOKEN" or as the cookie of a login session
	// (the login form's). SetAuthToken replaces it. Wrong tokens are
	// slowed per client address: loginBurst at once, then one per
	// loginEvery; more get 429 without being checked.
	AuthToken string
	// SessionTTL is how long a login session lasts (default 12h).
	SessionTTL time.Duration
	// Logger gets wrong tokens and token changes (default: discarded).
	Logger *slog.Logger
	// MaxStreams bounds the event streams open at once (default 32); one
	// more gets 503 with Retry-After.
	MaxStreams int
}

// Server is the HTTP face of a View: the overview at /, a lock's page at
// /lock/<path>, their JSON at /api/locks and /api/locks/<path>, their
// live updates at /events (server-sent events), and, with revocation
// allowed, /revoke. Everything it serves is embedded. It checks the Host,
// the token and the origin of unsafe requests itself; timeouts are the
// http.Server's (the event stream lifts its own read deadline).
type Server struct {
	v        *View
	cfg      ServerConfig
	hosts    []hostRule
	auth     bool // a token is required (AuthToken was set)
	authMu   sync.RWMutex
	tok      string // the token required now
	sessions *sessions
	throttle *throttle
	streams  chan struct{} // a slot per open event stream
	token    string        // the revoke form's, against cross-site posts
	tmpl     *template.Template
	mux      *http.ServeMux
	handler  http.Handler // mux behind the cross-origin check
	quit     chan struct{}
	quitOnce sync.Once

	allowRevoke bool
}

// NewServer serves v as cfg says.
func NewServer(v *View, cfg ServerConfig) *Server {
	var b [16]byte
	_, _ = rand.Read(b[:])
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 32
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{v: v, cfg: cfg, allowRevoke: cfg.AllowRevoke, hosts: hostRules(cfg.AllowedHosts), streams: make(chan struct{}, cfg.MaxStreams),
		token: hex.EncodeToString(b[:]), mux: http.NewServeMux(), quit: make(chan struct{})}
	s.auth, s.tok = cfg.AuthToken != "", cfg.AuthToken
	s.sessions = newSessions(cfg.SessionTTL, maxSessions)
	s.throttle = newThrottle(loginBurst, loginEvery, maxThrottled)
	s.tmpl = template.Must(template.New("").Funcs(template.FuncMap{
		"rfc":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"clock":   func(t time.Time) string { return t.Local().Format("15:04:05") },
		"ago":     ago,
		"lockURL": lockURL,
		"label":   Recipe.Label,
		"join":    strings.Join,
		"short":   shortName,
		"inc":     func(i int) int { return i + 1 },
		"count":   Thousands,
		"maxID":   func() int { return MaxIDBytes },
		"bytes":   byteSize,
		"client":  clientText,
		"history": timelineSVG,
		"spark":   sparkSVG,
		"ms":      func(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() },
	}).ParseFS(assets, "assets/pages.html"))
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", filesOnly(http.FileServerFS(static))))
	s.mux.HandleFunc("GET /{$}", s.overview)
	s.mux.HandleFunc("GET /lock/{path...}", s.lock)
	s.mux.HandleFunc("GET /api/locks", s.apiLocks)
	s.mux.HandleFunc("GET /api/locks/{path...}", s.apiLock)
	s.mux.HandleFunc("GET /events", s.events)
	s.mux.HandleFunc("GET /revoke", s.confirmRevoke)
	s.mux.HandleFunc("POST /revoke", s.revoke)
	s.mux.HandleFunc("GET /login", s.loginForm)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("GET /logout", s.logout)
	s.mux.HandleFunc("POST /logout", s.logout)
	s.handler = http.NewCrossOriginProtection().Handler(s.mux)
	return s
}

// ServeHTTP implements http.Handler: a foreign Host gets 403, a request
// without the token (when one is required) 401 or the login form, a
// cross-origin unsafe request 403; then the routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !s.hostAllowed(r) {
		http.Error(w, "403 forbidden: this server does not answer to the Host "+strconv.Quote(r.Host)+" (zklock ui --allowed-hosts)", http.StatusForbidden)
		return
	}
	if r.URL.Path != "/login" && r.URL.Path != "/logout" && !strings.HasPrefix(r.URL.Path, "/static/") {
		switch ok, wait := s.authorized(r); {
		case wait > 0:
			tooOften(w, wait)
			return
		case !ok:
			s.unauthorized(w, r)
			return
		}
	}
	s.handler.ServeHTTP(w, r)
}

// Bounds of the login: wrong tokens allowed at once per client address,
// then one per loginEvery; the addresses and sessions kept.
const (
	loginBurst   = 10
	loginEvery   = time.Second
	maxThrottled = 4096
	maxSessions  = 1024
)

// filesOnly serves the static files, never a listing of them: a
// directory's path is 404.
func filesOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || r.URL.Path == "." || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Close ends the event streams, so that an http.Server can shut down.
func (s *Server) Close() { s.quitOnce.Do(func() { close(s.quit) }) }

// page is what every template gets.
type page struct {
	Title, Root, Namespace string
	ReadOnly, AllowRevoke  bool
	Auth                   bool // a token is required: the page offers to log out
	Status                 Status
	Events                 string // the URL of the page's event stream

	// The overview.
	Filter, Sort   string
	Locks          []Lock
	Held, Waiting  int
	Lock           Lock
	Schedule       *Schedule // the lock page of a schedule's election (schedule.go)
	Node           Node
	Message, Token string
	Next           string // the login form's page to go to
}

func (s *Server) base(title string) page {
	return page{Title: title, Root: s.v.cfg.Root, Namespace: s.v.s.Namespace(), ReadOnly: !s.allowRevoke, AllowRevoke: s.allowRevoke, Auth: s.auth}
}

// overviewPage is the overview as filtered and sorted by r's q and sort.
func (s *Server) overviewPage(r *http.Request) page {
	p := s.base("Locks")
	p.Filter, p.Sort = r.URL.Query().Get("q"), r.URL.Query().Get("sort")
	if p.Sort != "age" {
		p.Sort = "path"
	}
	o := s.v.Overview(p.Filter)
	sortLocks(o.Locks, p.Sort)
	p.Locks, p.Status = o.Locks, Status{Connected: o.Connected, Problem: o.Problem, NotShown: o.NotShown, At: o.At, Members: o.Ensemble,
		ClientsNote: o.ClientsNote, Deadlocks: o.Deadlocks}
	for _, l := range o.Locks {
		p.Held += len(l.Holders)
		p.Waiting += l.Waiting
	}
	p.Events = "/events?" + url.Values{"view": {"overview"}, "q": {p.Filter}, "sort": {p.Sort}}.Encode()
	return p
}

// sortLocks orders the overview: by path, or by hold age (the longest
// held first; free locks last, by path).
func sortLocks(ls []Lock, by string) {
	if by != "age" {
		return
	}
	slices.SortStableFunc(ls, func(a, b Lock) int {
		ah, bh := len(a.Holders) > 0, len(b.Holders) > 0
		switch {
		case ah && bh:
			return a.HeldSince.Compare(b.HeldSince)
		case ah:
			return -1
		case bh:
			return 1
		}
		return 0
	})
}

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "overview", s.overviewPage(r))
}

// lockPage is the page of the lock at the caller's path p.
func (s *Server) lockPage(p string) (page, bool) {
	l, st, ok := s.v.Lock(p)
	pg := s.base(p)
	pg.Lock, pg.Status = l, st
	if ok {
		pg.Schedule = s.v.Schedule(p)
	}
	pg.Events = "/events?" + url.Values{"lock": {p}}.Encode()
	return pg, ok
}

func (s *Server) lock(w http.ResponseWriter, r *http.Request) {
	p := "/" + r.PathValue("path")
	pg, ok := s.lockPage(p)
	if !ok {
		s.fail(w, http.StatusNotFound, "No lock at "+p, noLock(p, s.v.Status()))
		return
	}
	if r.URL.Query().Get("revoked") != "" {
		pg.Message = "The revocation request was written. A revocable holder releases; the queue below shows when it does."
	}
	s.render(w, http.StatusOK, "lock", pg)
}

func noLock(p string, st Status) string {
	msg := "No lock directory is known at " + p + ": it may not exist, hold no lock nodes, or lie outside the root."
	if st.Problem != "" {
		msg += " (" + st.Problem + ")"
	}
	return msg
}

func (s *Server) apiLocks(w http.ResponseWriter, r *http.Request) {
	o := s.v.Overview(r.URL.Query().Get("q"))
	sortLocks(o.Locks, r.URL.Query().Get("sort"))
	writeJSON(w, http.StatusOK, o)
}

func (s *Server) apiLock(w http.ResponseWriter, r *http.Request) {
	p := "/" + r.PathValue("path")
	l, st, ok := s.v.Lock(p)
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": noLock(p, st)})
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Lock
		Connected   bool     `json:"connected"`
		Problem     string   `json:"view_problem,omitempty"`
		Ensemble    []Member `json:"ensemble,omitempty"`
		ClientsNote string   `json:"clients_note,omitempty"`
	}{l, st.Connected, st.Problem, st.Members, st.ClientsNote})
}

func (s *Server) render(w http.ResponseWriter, code int, name string, p page) {
	var b bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, code int, title, msg string) {
	p := s.base(title)
	p.Message = msg
	s.render(w, code, "error", p)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
