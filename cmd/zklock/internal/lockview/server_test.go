package lockview_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

func serve(t testing.TB, v *lockview.View, allowRevoke bool) *httptest.Server {
	t.Helper()
	h := lockview.NewServer(v, lockview.ServerConfig{AllowRevoke: allowRevoke})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return srv
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// nextUpdate reads the stream up to its next "update" event's data.
func nextUpdate(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	var data []string
	inUpdate := false
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "event: update":
			inUpdate = true
		case strings.HasPrefix(line, "data: ") && inUpdate:
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "" && inUpdate:
			return strings.Join(data, "\n")
		}
	}
}

// The pages, their JSON and their event stream show the same lock; the
// stream sends an update when a waiter joins; bad paths get a clear 404;
// revocation is refused unless allowed, and without the form's token.
func TestIntegration_Server(t *testing.T) {
	c := zktest.Start(t)
	s := connect(t, c)
	ctx := ctxT(t, time.Minute)
	m, err := zklock.NewMutex(s, "/locks/web/job", zklock.WithData([]byte("worker-7")))
	require.NoError(t, err)
	h := hold(t, m)
	v := newView(t, connect(t, c), lockview.Config{Root: "/locks"})
	srv := serve(t, v, false)

	code, body := get(t, srv.URL+"/api/locks")
	require.Equal(t, http.StatusOK, code)
	var o lockview.Overview
	require.NoError(t, json.Unmarshal([]byte(body), &o))
	require.Len(t, o.Locks, 1)
	require.Equal(t, "worker-7", o.Locks[0].Holders[0].ID)
	require.Equal(t, h.Token(), o.Locks[0].Token)

	code, body = get(t, srv.URL+"/")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "worker-7")
	require.Contains(t, body, `href="/lock/locks/web/job"`)
	code, body = get(t, srv.URL+"/lock/locks/web/job")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "worker-7")
	require.NotContains(t, body, "Ask to release", "read-only by default")
	code, body = get(t, srv.URL+"/api/locks/locks/nope")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "No lock directory is known at /locks/nope")
	code, _ = get(t, srv.URL+"/lock/locks/nope")
	require.Equal(t, http.StatusNotFound, code)
	code, body = get(t, srv.URL+"/revoke?node="+url.QueryEscape(h.Node()))
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, body, "--allow-revoke")

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events?lock=/locks/web/job", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	r := bufio.NewReader(resp.Body)
	first := nextUpdate(t, r)
	require.Contains(t, first, "worker-7")
	require.Contains(t, first, "Nothing has changed since this server started.")
	m2, err := zklock.NewMutex(connect(t, c), "/locks/web/job", zklock.WithData([]byte("late-waiter")))
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = m2.Lock(wctx)
	}()
	defer func() { stop(); <-done }()
	for u := first; !strings.Contains(u, "late-waiter"); {
		u = nextUpdate(t, r)
	}

	rsrv := serve(t, v, true)
	form := url.Values{"node": {h.Node()}, "token": {"forged"}}
	resp2, err := http.PostForm(rsrv.URL+"/revoke", form)
	require.NoError(t, err)
	resp2.Body.Close()
	require.Equal(t, http.StatusForbidden, resp2.StatusCode)
}
