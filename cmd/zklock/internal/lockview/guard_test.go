package lockview_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

const testToken = "0123456789abcdef-test-token"

// do sends one request with the given Host, headers and form, without
// following redirects, and returns the response (its body read).
func do(t *testing.T, method, u, host string, hdr map[string]string, form url.Values) (*http.Response, string) {
	t.Helper()
	return doFrom(t, "", method, u, host, hdr, form)
}

// doFrom is do from the loopback address from (e.g. 127.0.0.2; "": the
// system's choice), as another client.
func doFrom(t *testing.T, from, method, u, host string, hdr map[string]string, form url.Values) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctxT(t, 20*time.Second), method, u, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if from != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c.Transport = &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, "" // a stream: not read to its end
	}
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// routes are every route of the server, and one that is none.
var routes = []struct{ method, path string }{
	{"GET", "/"}, {"GET", "/lock/locks/web/job"}, {"GET", "/api/locks"}, {"GET", "/api/locks/locks/web/job"},
	{"GET", "/events?view=overview"}, {"GET", "/revoke?node=/locks/web/job/x"}, {"POST", "/revoke"},
	{"GET", "/static/style.css"}, {"GET", "/login"}, {"POST", "/login"}, {"GET", "/nowhere"},
}

// A Host that does not name the server gets 403 on every route, before
// routing, whatever else the request carries (DNS rebinding: a page of
// another name resolved to this address); the names it serves are
// served.
func TestIntegration_ServerHostAllowList(t *testing.T) {
	c := zktest.Start(t)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	for _, tc := range []struct {
		name    string
		cfg     lockview.ServerConfig
		refused []string
		served  []string
	}{
		{"loopback by default", lockview.ServerConfig{AllowRevoke: true},
			[]string{"rebind.attacker.example:PORT", "rebind.attacker.example", "localhost.attacker.example:PORT", "127.0.0.2:PORT", "[::2]:PORT"},
			[]string{"127.0.0.1:PORT", "localhost:PORT", "LOCALHOST.:PORT", "[::1]:PORT"}},
		{"allowed hosts", lockview.ServerConfig{AllowRevoke: true, AuthToken: testToken, AllowedHosts: []string{"locks.example.com", "127.0.0.1:PORT"}},
			[]string{"localhost:PORT", "127.0.0.1:1", "rebind.attacker.example:PORT", "example.com:PORT"},
			[]string{"locks.example.com", "locks.example.com:8443", "127.0.0.1:PORT"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(nil)
			port := fmt.Sprint(srv.Listener.Addr().(*net.TCPAddr).Port)
			for i, a := range tc.cfg.AllowedHosts {
				tc.cfg.AllowedHosts[i] = strings.ReplaceAll(a, "PORT", port)
			}
			h := lockview.NewServer(v, tc.cfg)
			srv.Config.Handler = h
			srv.Start()
			t.Cleanup(func() { h.Close(); srv.Close() })
			bearer := map[string]string{"Authorization": "Bearer " + testToken, "Sec-Fetch-Site": "same-origin"}
			for _, host := range tc.refused {
				host = strings.ReplaceAll(host, "PORT", port)
				for _, r := range routes {
					resp, body := do(t, r.method, srv.URL+r.path, host, bearer, url.Values{"token": {testToken}})
					assert.Equal(t, http.StatusForbidden, resp.StatusCode, "Host %q %s %s", host, r.method, r.path)
					assert.Contains(t, body, "does not answer to the Host", "Host %q %s %s", host, r.method, r.path)
				}
			}
			for _, host := range tc.served {
				host = strings.ReplaceAll(host, "PORT", port)
				resp, body := do(t, "GET", srv.URL+"/api/locks", host, bearer, nil)
				assert.Equal(t, http.StatusOK, resp.StatusCode, "Host %q: %s", host, body)
			}
		})
	}
}

// With a token, every route but the login form and the static files asks
// for it: a bearer token or the login form's cookie (which is not the
// token); a page request without it goes to the login form, and back to
// the page after; a cross-site login post is refused.
func TestIntegration_ServerToken(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	m, err := zklock.NewMutex(s, "/locks/web/job", zklock.WithData([]byte("worker-7")))
	require.NoError(t, err)
	hold(t, m)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	h := lockview.NewServer(v, lockview.ServerConfig{AllowRevoke: true, AuthToken: testToken})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })

	for i, r := range routes {
		if strings.HasPrefix(r.path, "/login") || strings.HasPrefix(r.path, "/static/") {
			continue
		}
		from := fmt.Sprintf("127.0.0.%d", 10+i) // each route's wrong tokens from an address of its own: they are slowed per address
		for _, auth := range []string{"", "Bearer wrong-token-of-some-length", "Bearer " + testToken[:len(testToken)-1], "Basic " + testToken} {
			resp, _ := doFrom(t, from, r.method, srv.URL+r.path, "", map[string]string{"Authorization": auth}, url.Values{})
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %s with %q", r.method, r.path, auth)
			assert.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
		}
	}
	resp, body := do(t, "GET", srv.URL+"/api/locks", "", map[string]string{"Authorization": "Bearer " + testToken}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "worker-7")
	resp, _ = do(t, "GET", srv.URL+"/static/style.css", "", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	html := map[string]string{"Accept": "text/html"}
	resp, _ = do(t, "GET", srv.URL+"/lock/locks/web/job", "", html, nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login?next=%2Flock%2Flocks%2Fweb%2Fjob", resp.Header.Get("Location"))
	resp, body = do(t, "GET", srv.URL+"/login?next=%2Flock%2Flocks%2Fweb%2Fjob", "", html, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `type="password"`)
	require.NotContains(t, body, "worker-7")

	resp, _ = do(t, "POST", srv.URL+"/login", "", nil, url.Values{"token": {"wrong"}, "next": {"/"}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Empty(t, resp.Cookies())
	resp, _ = do(t, "POST", srv.URL+"/login", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, url.Values{"token": {testToken}})
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a cross-site login")
	resp, _ = do(t, "POST", srv.URL+"/login", "", nil, url.Values{"token": {testToken}, "next": {"//attacker.example/x"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"), "only a path of this server")
	resp, _ = do(t, "POST", srv.URL+"/login", "", nil, url.Values{"token": {testToken}, "next": {"/lock/locks/web/job"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/lock/locks/web/job", resp.Header.Get("Location"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	ck := cookies[0]
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	require.NotContains(t, ck.Value, testToken)
	resp, body = do(t, "GET", srv.URL+"/lock/locks/web/job", "", map[string]string{"Cookie": ck.Name + "=" + ck.Value}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "worker-7")
	resp, _ = do(t, "GET", srv.URL+"/api/locks", "", map[string]string{"Cookie": ck.Name + "=" + ck.Value + "0"}, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

// At most MaxStreams event streams are open at once: one more gets 503
// with Retry-After; once one ends, a new one is served.
func TestIntegration_ServerStreamCap(t *testing.T) {
	c := zktest.Start(t)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	h := lockview.NewServer(v, lockview.ServerConfig{MaxStreams: 2})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	open := func(ctx context.Context) *http.Response {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?view=overview", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	ctx1, end1 := context.WithCancel(ctxT(t, time.Minute))
	first := open(ctx1)
	second := open(ctxT(t, time.Minute))
	defer second.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode)
	require.Equal(t, http.StatusOK, second.StatusCode)
	third := open(ctxT(t, time.Minute))
	third.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, third.StatusCode)
	require.Equal(t, "5", third.Header.Get("Retry-After"))

	end1()
	first.Body.Close()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp := open(ctx)
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "a stream once one ended")
}

// The page to go to after the login is a path of this server, parsed as a
// URL: a tab or newline (which a browser drops from a Location, making
// "/\t/evil.example/" "//evil.example/"), a scheme, a host or a
// backslash sends to "/" instead.
func TestLocalNext(t *testing.T) {
	for next, want := range map[string]string{
		"/":                        "/",
		"/lock/locks/web/job":      "/lock/locks/web/job",
		"/?q=web&sort=age":         "/?q=web&sort=age",
		"/lock/a%2Fb":              "/lock/a%2Fb",
		"":                         "/",
		"/\t/evil.example/":        "/",
		"/\n/evil.example/":        "/",
		"/\r\n/evil.example/":      "/",
		"/ /evil.example/":         "/",
		"//evil.example/":          "/",
		"/\\evil.example/":         "/",
		"\\/evil.example/":         "/",
		"https://evil.example/":    "/",
		"http:/evil.example":       "/",
		"javascript:alert(1)":      "/",
		"evil.example":             "/",
		"/%2F/evil.example":        "/%2F/evil.example",
		"///evil.example":          "/",
		"/\u00a0/evil.example/":    "/",
		"/\u2028/evil.example/":    "/",
		"/lock/x#frag":             "/lock/x",
		"//user@evil.example/":     "/",
		"/\x7f/evil.example":       "/",
		"/%09/evil.example/":       "/%09/evil.example/",
		"/lock/locks/%E2%9C%93/ok": "/lock/locks/%E2%9C%93/ok",
	} {
		assert.Equal(t, want, lockview.LocalNext(next), "%q", next)
	}
}

// A login is a session of its own: a random cookie (two logins get two),
// HttpOnly, SameSite=Strict, that expires; /logout ends it (its cookie
// then no longer works, another login's still does); a new token
// (SetAuthToken: a changed --auth-token-file) ends every session, and
// only the new token is taken; an empty one refuses everyone.
func TestIntegration_ServerLoginSession(t *testing.T) {
	c := zktest.Start(t)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	h := lockview.NewServer(v, lockview.ServerConfig{AuthToken: testToken, SessionTTL: time.Hour})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	login := func(tok string) *http.Cookie {
		resp, _ := do(t, "POST", srv.URL+"/login", "", nil, url.Values{"token": {tok}, "next": {"/"}})
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Len(t, resp.Cookies(), 1)
		return resp.Cookies()[0]
	}
	with := func(ck *http.Cookie) int {
		resp, _ := do(t, "GET", srv.URL+"/api/locks", "", map[string]string{"Cookie": ck.Name + "=" + ck.Value}, nil)
		return resp.StatusCode
	}
	bearer := func(tok string) int {
		resp, _ := do(t, "GET", srv.URL+"/api/locks", "", map[string]string{"Authorization": "Bearer " + tok}, nil)
		return resp.StatusCode
	}
	a, b := login(testToken), login(testToken)
	require.NotEqual(t, a.Value, b.Value, "a session per login")
	for _, ck := range []*http.Cookie{a, b} {
		require.True(t, ck.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, ck.SameSite)
		require.Equal(t, 3600, ck.MaxAge, "it expires")
		require.WithinDuration(t, time.Now().Add(time.Hour), ck.Expires, time.Minute)
		require.NotContains(t, ck.Value, testToken)
		require.Equal(t, http.StatusOK, with(ck))
	}

	resp, _ := do(t, "GET", srv.URL+"/logout", "", map[string]string{"Cookie": a.Name + "=" + a.Value}, nil)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/login", resp.Header.Get("Location"))
	require.Len(t, resp.Cookies(), 1)
	require.Equal(t, -1, resp.Cookies()[0].MaxAge, "the browser drops the cookie")
	require.Equal(t, http.StatusUnauthorized, with(a), "logged out")
	require.Equal(t, http.StatusOK, with(b), "another login")
	resp, _ = do(t, "POST", srv.URL+"/logout", "", map[string]string{"Cookie": b.Name + "=" + b.Value, "Sec-Fetch-Site": "same-origin"}, url.Values{})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, http.StatusUnauthorized, with(b), "logged out by POST")

	c1 := login(testToken)
	const newToken = "another-token-0123456789abcdef"
	h.SetAuthToken(newToken)
	require.Equal(t, http.StatusUnauthorized, with(c1), "the token changed")
	require.Equal(t, http.StatusUnauthorized, bearer(testToken))
	require.Equal(t, http.StatusOK, bearer(newToken))
	c2 := login(newToken)
	require.Equal(t, http.StatusOK, with(c2))
	h.SetAuthToken("")
	require.Equal(t, http.StatusUnauthorized, with(c2), "locked")
	require.Equal(t, http.StatusUnauthorized, bearer(newToken), "locked")
	resp, _ = do(t, "POST", srv.URL+"/login", "", nil, url.Values{"token": {""}})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "locked")
}

// Wrong tokens are slowed per client address: a burst of wrong logins
// from one address gets 429 with Retry-After once it has tried ten times,
// the right token from it too (unchecked), and each is logged; the right
// token from another address goes through at once. Wrong bearer tokens
// count as wrong logins.
func TestIntegration_ServerLoginThrottle(t *testing.T) {
	c := zktest.Start(t)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	var logs syncBuffer
	h := lockview.NewServer(v, lockview.ServerConfig{AuthToken: testToken, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	codes := map[int]int{}
	for range 30 {
		resp, _ := doFrom(t, "127.0.0.2", "POST", srv.URL+"/login", "", nil, url.Values{"token": {"wrong-token-0123456789"}})
		codes[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests {
			require.NotEmpty(t, resp.Header.Get("Retry-After"))
		}
	}
	require.LessOrEqual(t, codes[http.StatusUnauthorized], 12, "checked: %v", codes)
	require.GreaterOrEqual(t, codes[http.StatusTooManyRequests], 18, "slowed: %v", codes)
	resp, body := doFrom(t, "127.0.0.2", "POST", srv.URL+"/login", "", nil, url.Values{"token": {testToken}})
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "not checked while slowed")
	require.Contains(t, body, "Too many wrong tokens from your address")

	start := time.Now()
	resp, _ = doFrom(t, "127.0.0.1", "POST", srv.URL+"/login", "", nil, url.Values{"token": {testToken}, "next": {"/"}})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "another address")
	require.Less(t, time.Since(start), time.Second, "at once")

	for range 12 {
		doFrom(t, "127.0.0.3", "GET", srv.URL+"/api/locks", "", map[string]string{"Authorization": "Bearer wrong-token-0123456789"}, nil)
	}
	resp, _ = doFrom(t, "127.0.0.3", "GET", srv.URL+"/api/locks", "", map[string]string{"Authorization": "Bearer " + testToken}, nil)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "wrong bearer tokens count")
	resp, _ = doFrom(t, "127.0.0.1", "GET", srv.URL+"/api/locks", "", map[string]string{"Authorization": "Bearer " + testToken}, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	out := logs.String()
	require.Contains(t, out, "wrong token")
	require.Contains(t, out, "client=127.0.0.2")
	require.Contains(t, out, "slowing this address down")
	require.Contains(t, out, "client=127.0.0.3")
	require.NotContains(t, out, "wrong-token-0123456789", "never the token tried")
}

// /static/ serves the page's files, without the token (the login form
// needs them), but never their listing.
func TestIntegration_ServerStaticNoListing(t *testing.T) {
	c := zktest.Start(t)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	h := lockview.NewServer(v, lockview.ServerConfig{AuthToken: testToken})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })
	for _, p := range []string{"/static/", "/static/?C=M;O=D", "/static//", "/static/./"} {
		resp, body := do(t, "GET", srv.URL+p, "", nil, nil)
		require.NotEqual(t, http.StatusOK, resp.StatusCode, p)
		require.NotContains(t, body, "live.js", p)
		require.NotContains(t, body, "pages.html", p)
	}
	resp, _ := do(t, "GET", srv.URL+"/static/style.css", "", nil, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
