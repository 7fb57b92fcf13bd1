package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// A page opened while the server streams to as many pages as
// --max-streams allows says its updates are paused, and goes live by
// itself once a stream ends (the 503's EventSource is tried again).
func TestIntegration_UIStreamCapBrowser(t *testing.T) {
	c, _, env := zkSetup(t)
	holdLock(t, session(t, c), "/locks/capped/job", "capped-holder")
	_, base := startUI(t, env, "--max-streams", "1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/events?view=overview", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	browser := startBrowser(t)
	run(t, browser, chromedp.Navigate(base+"/"))
	require.True(t, waitPage(browser, `() => { const p = document.querySelector(".paused"); return p && !p.hidden; }`, nil),
		"the page never said its updates were paused")
	require.False(t, eval[bool](t, browser, `document.getElementById("live").hasAttribute("data-updated")`))
	cancel()
	resp.Body.Close()
	require.True(t, waitPage(browser, `() => document.getElementById("live").hasAttribute("data-updated") && document.querySelector(".paused").hidden`, nil),
		"the page never went live after the other stream ended:\n%s", liveText(t, browser))
	waitLive(t, browser, "capped-holder")
}
