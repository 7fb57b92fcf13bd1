//go:build unix

package main

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A FIFO, or another user's file, as --auth-token-file is refused at
// once (exit 2), saying why: it used to hang the start-up, deaf to
// SIGINT and SIGTERM.
func TestUITokenFileNotRegular(t *testing.T) {
	t.Parallel()
	env := []string{"ZKLOCK_SERVERS=127.0.0.1:1", "ZKLOCK_TIMEOUT=1s"}
	cases := map[string]string{fifo(t): "is not a regular file (a FIFO)", t.TempDir(): "is not a regular file (a directory)"}
	if os.Getuid() == 0 {
		other := filepath.Join(t.TempDir(), "token")
		require.NoError(t, os.WriteFile(other, []byte("0123456789abcdef0123\n"), 0o600))
		require.NoError(t, os.Chown(other, 65534, 65534))
		cases[other] = "is owned by uid 65534, not by this user (uid 0) or root"
	}
	for file, want := range cases {
		p := startZklock(t, env, "ui", "--auth-token-file", file)
		code := p.wait(t, 5*time.Second)
		assert.Equal(t, exitUsage, code, p.stderr.String())
		assert.Contains(t, p.stderr.String(), "invalid --auth-token-file: "+file+" "+want)
		assert.Less(t, p.dur, 5*time.Second)
	}
}

// SIGTERM during zklock ui's start-up ends it promptly: while it reads a
// FIFO given as --auth-token-file or --auth-file (refused at once now;
// it used to block in open(2), SIGTERM ignored), and while it waits for
// a ZooKeeper server that accepts and never answers.
func TestUIStartupSIGTERM(t *testing.T) {
	t.Parallel()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	env := []string{"ZKLOCK_SERVERS=" + silent.Addr().String(), "ZKLOCK_TIMEOUT=1m"}
	for name, args := range map[string][]string{
		"fifo token":  {"ui", "--auth-token-file", fifo(t)},
		"fifo auth":   {"--auth-file", fifo(t), "ui"},
		"silent peer": {"-v", "ui"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := startZklock(t, env, args...)
			require.Eventually(t, func() bool {
				return p.exited() || strings.Contains(p.stderr.String(), "zklock: connecting") || time.Since(p.start) > 3*time.Second
			}, 10*time.Second, 5*time.Millisecond)
			if !p.exited() {
				require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
			}
			code := p.wait(t, 5*time.Second)
			if name == "silent peer" {
				assert.Equal(t, exitOK, code, p.stderr.String())
			} else {
				assert.Equal(t, exitUsage, code, p.stderr.String())
				assert.Contains(t, p.stderr.String(), "not a regular file (a FIFO)")
			}
		})
	}
}

// 300 idle connections from one address (127.0.0.2) take at most
// --max-conns-per-client of --max-conns: another address (127.0.0.1)
// still loads the page at once. They used to take every slot, and the
// page answered 503 to everyone until they timed out.
func TestIntegration_UIMaxConnsPerClient(t *testing.T) {
	_, _, env := zkSetup(t)
	_, base := uiWith(t, env)
	addr := strings.TrimPrefix(base, "http://")
	hog := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 10 * time.Second}
	for range 300 {
		c, err := hog.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range 3 {
		resp, err := client.Get(base + "/")
		require.NoError(t, err, "the page from 127.0.0.1")
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "the page from 127.0.0.1")
	}
	hogged := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DialContext: hog.DialContext}}
	resp, err := hogged.Get(base + "/api/locks")
	if err == nil { // answered 503, or closed unanswered past the refusals answered at once
		resp.Body.Close()
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a 301st from 127.0.0.2")
	}
}

// A changed --auth-token-file ends every login session and only the new
// token is taken; a login's cookie no longer works after /logout.
func TestIntegration_UITokenFileChanged(t *testing.T) {
	_, _, env := zkSetup(t)
	token := filepath.Join(t.TempDir(), "token")
	const tok, tok2 = "a-token-for-the-test-0123456789", "another-token-for-the-test-98765"
	require.NoError(t, os.WriteFile(token, []byte(tok+"\n"), 0o600))
	_, base := uiWith(t, env, "--auth-token-file", token)
	noFollow := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	login := func(tok string) *http.Cookie {
		resp, err := noFollow.PostForm(base+"/login", url.Values{"token": {tok}, "next": {"/"}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Len(t, resp.Cookies(), 1)
		return resp.Cookies()[0]
	}
	get := func(path string, ck *http.Cookie, bearer string) int {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if ck != nil {
			req.AddCookie(ck)
		}
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := noFollow.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	out := login(tok)
	require.Equal(t, http.StatusOK, get("/api/locks", out, ""))
	require.Equal(t, http.StatusSeeOther, get("/logout", out, ""))
	require.Equal(t, http.StatusUnauthorized, get("/api/locks", out, ""), "logged out")

	kept := login(tok)
	require.Equal(t, http.StatusOK, get("/api/locks", kept, ""))
	require.NoError(t, os.WriteFile(token, []byte(tok2+"\n"), 0o600))
	require.Eventually(t, func() bool { return get("/api/locks", kept, "") == http.StatusUnauthorized },
		20*time.Second, 20*time.Millisecond, "the session outlived the token")
	require.Equal(t, http.StatusUnauthorized, get("/api/locks", nil, tok))
	require.Equal(t, http.StatusOK, get("/api/locks", nil, tok2))
	require.Equal(t, http.StatusOK, get("/api/locks", login(tok2), ""))
}

// In Chromium, a login with next=/%09/evil.example/ (a tab, which the
// browser drops from a Location, making it //evil.example/) stays on the
// UI's origin; so does one with next=//127.0.0.2:PORT/. Names resolve to
// nothing but loopback here, so nothing leaves the machine.
func TestIntegration_UIBrowserLoginStaysOnSite(t *testing.T) {
	_, _, env := zkSetup(t)
	token := filepath.Join(t.TempDir(), "token")
	const tok = "a-token-for-the-test-0123456789"
	require.NoError(t, os.WriteFile(token, []byte(tok+"\n"), 0o600))
	_, base := startUI(t, env, "--auth-token-file", token)
	decoy, err := net.Listen("tcp", "127.0.0.2:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("decoy")) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(decoy) }()
	t.Cleanup(func() { _ = srv.Close() })
	browser := startBrowser(t, chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE 127.0.0.2"))
	for _, next := range []string{"/%09/evil.example/", "/%09/" + decoy.Addr().String() + "/", "/%0a/" + decoy.Addr().String() + "/",
		"//" + decoy.Addr().String() + "/", "/%5c" + decoy.Addr().String() + "/"} {
		run(t, browser, chromedp.Navigate(base+"/login?next="+next), chromedp.WaitVisible(chromedp.CSS(`#token`)),
			chromedp.SendKeys(chromedp.CSS(`#token`), tok), chromedp.Submit(chromedp.CSS(`#token`)))
		var at string
		require.Eventually(t, func() bool { // the page may be between two documents: an error is "not yet"
			ctx, cancel := context.WithTimeout(browser, 2*time.Second)
			defer cancel()
			href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState === "complete" ? location.href : ""`))
			at = href
			return err == nil && href != "" && !strings.Contains(href, "/login")
		}, 20*time.Second, 50*time.Millisecond, "next=%s: the login did not end (at %q)", next, at)
		u, err := url.Parse(at)
		require.NoError(t, err)
		require.Equal(t, base, u.Scheme+"://"+u.Host, "next=%s: after the login the browser is at %s", next, at)
		run(t, browser, chromedp.Navigate(base+"/logout"), chromedp.WaitVisible(chromedp.CSS(`#token`)))
	}
}
