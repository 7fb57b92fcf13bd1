package main

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

// spanRow is a row of a lock's history as the page's SVG draws it.
type spanRow struct {
	Label            string
	HeldFrom, HeldTo float64
	Waits, Ends      bool
}

// The lock's page draws its history in a real browser: a handoff is two
// rows, the second's hold starting where the first's ends, with its wait
// before; the waits and holds that ended are counted; the overview's
// sparkline counts the holds. Set ZKLOCK_UI_HISTORY_SCREENSHOT=FILE to
// save a screenshot of the lock's page.
func TestIntegration_UIHistoryBrowser(t *testing.T) {
	c, _, env := zkSetup(t)
	_, base := startUI(t, env)
	browser := startBrowser(t)
	first := holdLock(t, session(t, c), "/locks/handoff/job", "first-holder")

	m, err := zklock.NewMutex(session(t, c), "/locks/handoff/job", zklock.WithData([]byte("second-holder")))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	held := make(chan *zklock.Hold, 1)
	go func() {
		h, err := m.Lock(ctx)
		if err != nil {
			close(held)
			return
		}
		held <- h
	}()
	t.Cleanup(func() {
		cancel()
		if h, ok := <-held; ok {
			_ = h.Release()
		}
	})

	run(t, browser, chromedp.Navigate(base+"/lock/locks/handoff/job"))
	waitLive(t, browser, "first-holder", "second-holder", "queued")
	require.NoError(t, first.Release())
	waitLive(t, browser, "released first-holder", "acquired second-holder")
	const rows = `Array.from(document.querySelectorAll("svg.history g.span")).map(g => {
		const held = g.querySelector("rect.held");
		return {Label: g.querySelector("text.label").textContent,
			HeldFrom: held ? Number(held.getAttribute("data-from")) : -1, HeldTo: held ? Number(held.getAttribute("data-to")) : -1,
			Waits: !!g.querySelector("rect.wait"), Ends: !!g.querySelector("line.end")};
	})`
	require.True(t, waitPage(browser, `() => document.querySelectorAll("svg.history rect.held").length == 2`, nil),
		"the history never drew two holds:\n%s", liveText(t, browser))
	got := eval[[]spanRow](t, browser, rows)
	require.Len(t, got, 2, "%+v", got)
	require.Contains(t, got[0].Label, "first-holder")
	require.Contains(t, got[1].Label, "second-holder")
	require.True(t, got[0].Ends, "the first hold ends: %+v", got[0])
	require.False(t, got[1].Ends, "the second still holds: %+v", got[1])
	require.True(t, got[1].Waits, "the second waited: %+v", got[1])
	require.GreaterOrEqual(t, got[1].HeldFrom, got[0].HeldTo, "the second hold starts after the first ends: %+v", got)
	require.Greater(t, got[0].HeldTo, got[0].HeldFrom)
	if f := os.Getenv("ZKLOCK_UI_HISTORY_SCREENSHOT"); f != "" {
		run(t, browser, chromedp.EmulateViewport(1100, 640))
		tctx, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f, png, 0o644))
	}
	text := liveText(t, browser)
	require.Regexp(t, `Waits\s+1: p50 `, text)
	require.Regexp(t, `Holds\s+1: p50 `, text)

	run(t, browser, chromedp.Navigate(base+"/"))
	waitLive(t, browser, "/locks/handoff/job")
	title := eval[string](t, browser, `document.querySelector("svg.spark title").textContent`)
	require.Contains(t, title, "2 holds in the last 30 minutes")
}
