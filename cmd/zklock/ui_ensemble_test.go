package main

import (
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// The ensemble panel in a real browser, with three members: each one's
// mode (one leader, two followers) from srvr; the banner when the view's
// connection is cut (and its end when it is back); and when a member
// stops, the banner names it. The view's session goes through zktest's
// proxy (which cuts it); the members are asked directly (--members).
func TestIntegration_UIEnsembleBrowser(t *testing.T) {
	c := zktest.StartEnsemble(t)
	c.RequireFaults(t)
	p := c.Proxy(t)
	env := []string{"ZKLOCK_SERVERS=" + p.ConnectString(), "ZKLOCK_SESSION_TIMEOUT=" + zkSessionTimeout.String()}
	holdLock(t, session(t, c), "/locks/ensemble/job", "worker-e")
	_, base := startUI(t, env, "--members", c.ConnectString(), "--ensemble-poll", "1s")
	browser := startBrowser(t)

	run(t, browser, chromedp.Navigate(base+"/"))
	want := append([]string{"worker-e", "Ensemble", "leader", "follower"}, c.Servers()...)
	waitLive(t, browser, want...)
	modes := eval[[]string](t, browser, `Array.from(document.querySelectorAll("table.ensemble tbody tr td:first-of-type")).map(td => td.textContent.trim()).sort()`)
	require.Equal(t, []string{"follower", "follower", "leader"}, modes)

	mark(t, browser)
	p.Refuse(0, 1, 2)
	p.Cut()
	waitLive(t, browser, "Disconnected:", "the connection to ZooKeeper is lost")
	p.Heal()
	require.True(t, waitPage(browser, `() => !document.getElementById("live").innerText.includes("Disconnected:")`, nil),
		"the banner stayed after the connection came back:\n%s", liveText(t, browser))
	requireNoReload(t, browser)

	leader, err := c.Leader()
	require.NoError(t, err)
	stopped := (leader + 1) % c.Size()
	require.NoError(t, c.Stop(stopped))
	waitLive(t, browser, "ensemble member "+c.Servers()[stopped]+" does not answer")
	down := eval[int](t, browser, `document.querySelectorAll("table.ensemble tbody tr.down").length`)
	require.Equal(t, 1, down)
	requireNoReload(t, browser)
}
