package main

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// At most --max-conns connections are open at once: one more is answered
// 503 and closed, whatever the others do (here: nothing); once one
// closes, requests are served again.
func TestIntegration_UIMaxConns(t *testing.T) {
	_, _, env := zkSetup(t)
	_, base := uiWith(t, env, "--max-streams", "1", "--max-conns", "2")
	addr := strings.TrimPrefix(base, "http://")
	var idle []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		idle = append(idle, c)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func() (int, string) {
		resp, err := client.Get(base + "/api/locks")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	require.Eventually(t, func() bool {
		code, body := get()
		return code == http.StatusServiceUnavailable && strings.Contains(body, "too many connections")
	}, 20*time.Second, 20*time.Millisecond, "a third connection is refused")

	require.NoError(t, idle[0].Close())
	require.Eventually(t, func() bool {
		code, _ := get()
		return code == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond, "served again once one closed")
}
