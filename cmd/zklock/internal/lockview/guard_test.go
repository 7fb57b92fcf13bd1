package lockview_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
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

	for _, r := range routes {
		if strings.HasPrefix(r.path, "/login") || strings.HasPrefix(r.path, "/static/") {
			continue
		}
		for _, auth := range []string{"", "Bearer wrong-token-of-some-length", "Bearer " + testToken[:len(testToken)-1], "Basic " + testToken} {
			resp, _ := do(t, r.method, srv.URL+r.path, "", map[string]string{"Authorization": auth}, url.Values{})
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
