package main

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
)

// TestIntegration_UIScheduleBrowser: the lock page of a schedule's
// election, in a real browser, shows the schedule: its period, the next
// tick, and the last runs with their outcomes, exit codes and the
// leader's id and token.
func TestIntegration_UIScheduleBrowser(t *testing.T) {
	c, _, env := zkSetup(t)
	s := session(t, c)
	sc, err := zklock.NewSchedule(s, "/locks/jobs/report", time.Second, zklock.WithScheduleID("reporter-1"))
	require.NoError(t, err)
	ran := make(chan zklock.Tick, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- sc.Run(ctx, func(_ context.Context, tk zklock.Tick) error {
			ran <- tk
			if tk.Time.Unix()%2 == 1 {
				return tickError(3) // odd seconds fail with exit status 3
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		require.True(t, errors.Is(<-done, context.Canceled))
	})
	var token int64
	for range 3 {
		select {
		case tk := <-ran:
			token = tk.Token
		case <-time.After(20 * time.Second):
			t.Fatal("the schedule ran no tick")
		}
	}
	_, base := startUI(t, env)
	browser := startBrowser(t)
	run(t, browser, chromedp.Navigate(base+"/lock/locks/jobs/report/leader"))
	text := waitLive(t, browser, "Schedule", "every 1s", "Next tick", "reporter-1", "ok", "failed")
	require.Contains(t, text, "/locks/jobs/report: one run per tick")
	rows := eval[int](t, browser, `document.querySelectorAll("table.schedule tbody tr").length`)
	require.GreaterOrEqual(t, rows, 3)
	exits := eval[[]string](t, browser, `[...document.querySelectorAll("table.schedule tr.run-failed td[data-label=Exit]")].map(e => e.innerText)`)
	require.NotEmpty(t, exits)
	for _, e := range exits {
		require.Equal(t, "3", e)
	}
	tokens := eval[[]string](t, browser, `[...document.querySelectorAll("table.schedule td[data-label=Token]")].map(e => e.innerText)`)
	require.Contains(t, tokens, itoa(token))
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
