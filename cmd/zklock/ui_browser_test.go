package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/internal/peers"
	"github.com/zklock/zklock/zktest"
)

// Tests of `zklock ui` in a real browser: Debian's chromium, headless,
// driven through the DevTools protocol (chromedp), one per test binary.

// startBrowser starts headless chromium with a profile of its own; the
// test's cleanup closes it.
func startBrowser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	var exe string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Fatal("chromium not found: the browser tests need Debian's chromium (scripts/install-deps.sh installs it)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses to run as root with its sandbox
	}
	opts = append(opts, extra...)
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		acancel()
	})
	require.NoError(t, chromedp.Do(ctx), "start chromium")
	return ctx
}

// run runs browser actions, bounded.
func run(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(tctx, actions...))
}

// eval evaluates a script in the page, bounded.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err)
	return v
}

// liveText is the text of the page's live part (or of the body).
func liveText(t *testing.T, ctx context.Context) string {
	t.Helper()
	return eval[string](t, ctx, `(document.getElementById("live") || document.body).innerText`)
}

// waitLive waits until the live part shows every one of want: the page
// itself checks at each change of its DOM (chromedp's mutation polling),
// for at most 20s.
func waitLive(t *testing.T, ctx context.Context, want ...string) string {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(tctx, chromedp.PollFunction[bool](
		`(want) => { const s = (document.getElementById("live") || document.body).innerText; return want.every(w => s.includes(w)); }`,
		chromedp.WithPollingMutation(), chromedp.WithPollingArgs(want)))
	s := liveText(t, ctx)
	if err != nil {
		t.Fatalf("the page (%s) never showed %q (%v); it shows:\n%s", eval[string](t, ctx, "location.href"), want, err, s)
	}
	return s
}

// waitPage waits until the page's JavaScript predicate js, given arg,
// holds: the page checks it at each change of its DOM, for at most 20s. It
// reports whether it did.
func waitPage(ctx context.Context, js string, arg any) bool {
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, err := chromedp.Run(tctx, chromedp.PollFunction[bool](js, chromedp.WithPollingMutation(), chromedp.WithPollingArgs(arg)))
	return err == nil
}

// overviewTable is the overview's table as text: what changes when the
// page updates it.
const overviewTable = `(document.querySelector("table.locks") || document.body).innerText`

// mark tags the loaded document, so that a reload can be told (the tag
// would be gone).
func mark(t *testing.T, ctx context.Context) {
	t.Helper()
	eval[string](t, ctx, `window.zklockTestMark = "kept"`)
}

func requireNoReload(t *testing.T, ctx context.Context) {
	t.Helper()
	require.Equal(t, "kept", eval[string](t, ctx, `String(window.zklockTestMark)`), "the page was reloaded")
}

// startUI runs `zklock ui` on a free port and returns its base URL.
func startUI(t *testing.T, env []string, args ...string) (*proc, string) {
	t.Helper()
	p := startZklock(t, env, append([]string{"ui", "--listen", "127.0.0.1:0"}, args...)...)
	t.Cleanup(func() {
		if t.Failed() && os.Getenv("ZKLOCK_UI_DUMP") != "" {
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
			<-p.done
		}
		if t.Failed() {
			t.Logf("zklock ui stdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		}
	})
	line := p.firstLine(t)
	m := regexp.MustCompile(`serving (http://\S+)/ `).FindStringSubmatch(line)
	require.NotNil(t, m, "first line %q", line)
	return p, m[1]
}

// holdLock takes the lock at p with our library, with data as its id.
func holdLock(t *testing.T, s *zklock.Session, p, data string, opts ...zklock.Option) *zklock.Hold {
	t.Helper()
	m, err := zklock.NewMutex(s, p, append(opts, zklock.WithData([]byte(data)))...)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := m.Lock(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.Release() })
	return h
}

// waitInBackground queues a waiter at p with our library until the test
// ends.
func waitInBackground(t *testing.T, s *zklock.Session, p, data string) {
	t.Helper()
	m, err := zklock.NewMutex(s, p, zklock.WithData([]byte(data)))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if h, err := m.Lock(ctx); err == nil {
			_ = h.Release()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

func session(t *testing.T, c *zktest.Cluster) *zklock.Session {
	t.Helper()
	s, err := zklock.Connect(c.Servers(), zklock.WithDialer(c.Dialer()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.WaitConnected(ctx))
	return s
}

// The page in a real browser against zklock ui on a real ZooKeeper, with
// holders from our library and from a Curator peer: it shows each holder's
// id and token; a waiter that starts after the page loaded appears without
// a reload (our library's and Curator's); a holder whose node is deleted
// shows as lost; with --allow-revoke the button (through its
// confirmation) makes a revocable holder release; and `zklock ls --json`,
// /api/locks and the page agree on the same state. Set
// ZKLOCK_UI_SCREENSHOT=FILE to save a screenshot of the overview.
func TestIntegration_UIBrowser(t *testing.T) {
	c, conn, env := zkSetup(t)
	s := session(t, c)
	ours := holdLock(t, s, "/locks/billing/nightly", "go-worker-1")
	cur := peers.Curator(t, c.ConnectString(), 10*time.Second)
	cur.Must(t, "mutex C /locks/reports/curator")
	cur.Must(t, "acquire C")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ev, err := cur.WaitEvent(ctx, "C", "acquired")
	require.NoError(t, err)
	curToken := czxid(t, conn, ev.Arg)
	curID, _, err := conn.Get(ev.Arg)
	require.NoError(t, err)
	revocable := holdLock(t, s, "/locks/reports/revocable", "", zklock.WithRevocable()) // a revocable node has no data, as Curator's
	released := make(chan error, 1)
	go func() {
		select {
		case <-revocable.Revoked():
			released <- revocable.Release()
		case <-revocable.Done():
			released <- revocable.Err()
		}
	}()
	latch, err := zklock.NewLeaderLatch(s, "/locks/leader/jobs", "leader-1")
	require.NoError(t, err)
	require.NoError(t, latch.Start(ctx))
	t.Cleanup(func() { _ = latch.Close() })
	term, err := latch.Await(ctx)
	require.NoError(t, err)

	sem, err := zklock.NewSemaphore(s, "/locks/crawl/fetchers", 4)
	require.NoError(t, err)
	lease, err := sem.Acquire(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lease.Release() })
	rw, err := zklock.NewRWLock(s, "/locks/schema", zklock.WithData([]byte("report-reader")))
	require.NoError(t, err)
	read, err := rw.ReadLock().Lock(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = read.Release() })

	_, base := startUI(t, env, "--allow-revoke")
	browser := startBrowser(t)

	t.Run("holders with id and token", func(t *testing.T) {
		run(t, browser, chromedp.Navigate(base+"/"))
		waitLive(t, browser, "/locks/billing/nightly", "/locks/reports/curator")
		rows := overviewRows(t, browser)
		require.Contains(t, rows["/locks/billing/nightly"][1], "go-worker-1")
		require.Equal(t, fmt.Sprint(ours.Token()), rows["/locks/billing/nightly"][3])
		require.Contains(t, rows["/locks/reports/curator"][1], string(curID))
		require.Equal(t, fmt.Sprint(curToken), rows["/locks/reports/curator"][3])
		require.Equal(t, "0", rows["/locks/billing/nightly"][4], "no one waits yet")
	})

	t.Run("holders' client addresses", func(t *testing.T) {
		_, curStat, err := conn.Exists(ev.Arg)
		require.NoError(t, err)
		for lock, sid := range map[string]int64{"/locks/billing/nightly": s.ID(), "/locks/reports/curator": curStat.EphemeralOwner} {
			addr := consClient(t, c, sid)
			require.True(t, waitPage(browser, `([lock, addr]) => Array.from(document.querySelectorAll("table.locks tbody tr")).some(tr =>
				tr.querySelector("th a") && tr.querySelector("th a").textContent === lock && tr.querySelectorAll("td")[1].textContent.includes(addr))`,
				[]string{lock, addr}), "the overview never showed %s's holder at %s:\n%s", lock, addr, liveText(t, browser))
		}
		run(t, browser, chromedp.Navigate(base+"/lock/locks/reports/curator"))
		waitLive(t, browser, consClient(t, c, curStat.EphemeralOwner), "Ensemble", "standalone", "this view's session")
		run(t, browser, chromedp.Navigate(base+"/"))
		waitLive(t, browser, "/locks/billing/nightly")
	})

	t.Run("a later waiter appears without reload", func(t *testing.T) {
		mark(t, browser)
		waitInBackground(t, session(t, c), "/locks/billing/nightly", "late-waiter")
		waiting := `(lock) => Array.from(document.querySelectorAll("table.locks tbody tr")).some(tr =>
			tr.querySelector("th a") && tr.querySelector("th a").textContent === lock && tr.querySelectorAll("td")[4].textContent.trim() === "1")`
		require.True(t, waitPage(browser, waiting, "/locks/billing/nightly"), "the overview never showed the waiter")
		requireNoReload(t, browser)

		run(t, browser, chromedp.Navigate(base+"/lock/locks/reports/curator"))
		waitLive(t, browser, string(curID), fmt.Sprint(curToken))
		mark(t, browser)
		cur.Must(t, "mutex D /locks/reports/curator")
		cur.Must(t, "acquire D")
		waitLive(t, browser, "queued", "waits")
		requireNoReload(t, browser)
	})

	t.Run("a holder whose node is deleted shows as lost", func(t *testing.T) {
		run(t, browser, chromedp.Navigate(base+"/lock/locks/leader/jobs"))
		waitLive(t, browser, "leader-1", fmt.Sprint(term.Token()))
		mark(t, browser)
		require.NoError(t, conn.Delete(term.Node(), -1))
		text := waitLive(t, browser, "lost leader-1")
		require.Contains(t, text, "deleted by another client")
		requireNoReload(t, browser)
	})

	t.Run("revoke makes a revocable holder release", func(t *testing.T) {
		run(t, browser, chromedp.Navigate(base+"/lock/locks/reports/revocable"))
		waitLive(t, browser, fmt.Sprint(revocable.Token()))
		run(t, browser, chromedp.Click(chromedp.CSS(`a.button`)), chromedp.WaitVisible(chromedp.CSS(`button.danger`)))
		require.Contains(t, liveText(t, browser), "Ask the holder to release?")
		select {
		case err := <-released:
			t.Fatalf("released before the confirmation: %v", err)
		default:
		}
		run(t, browser, chromedp.Click(chromedp.CSS(`button.danger`)), chromedp.WaitVisible(chromedp.CSS(`#live`)))
		select {
		case err := <-released:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatal("the revocable holder was not asked to release")
		}
		waitLive(t, browser, "revoke-requested", "released (no id)", "No one holds or waits.")
	})

	t.Run("ls --json, /api/locks and the page agree", func(t *testing.T) {
		run(t, browser, chromedp.Navigate(base+"/"))
		var page map[string][]string
		var api, ls lockview.Overview
		for {
			// The view catches up with ZooKeeper (which ls reads) by
			// updating the page: after a disagreement, wait for that.
			table := eval[string](t, browser, overviewTable)
			page = overviewRows(t, browser)
			api = getOverview(t, base+"/api/locks")
			code, stdout, stderr := runZklock(t, env, "ls", "--json")
			require.Equal(t, exitOK, code, stderr)
			require.NoError(t, json.Unmarshal([]byte(stdout), &ls))
			if summary(api) == summary(ls) && summary(api) == pageSummary(page) {
				break
			}
			require.True(t, waitPage(browser, "(b) => "+overviewTable+" !== b", table),
				"they never agreed:\napi:\n%s\nls:\n%s\npage:\n%s", summary(api), summary(ls), pageSummary(page))
		}
		require.GreaterOrEqual(t, len(api.Locks), 5, summary(api))
	})

	if f := os.Getenv("ZKLOCK_UI_SCREENSHOT"); f != "" {
		run(t, browser, chromedp.EmulateViewport(1100, 640), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("table.locks")))
		tctx, cancel := context.WithTimeout(browser, 20*time.Second)
		defer cancel()
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(f, png, 0o644))
	}
}

// overviewRows reads the overview table: each lock's cells, by path
// (recipe, holder, held for, token, waiting, oldest wait).
func overviewRows(t *testing.T, ctx context.Context) map[string][]string {
	t.Helper()
	rows := eval[[][]string](t, ctx, `Array.from(document.querySelectorAll("table.locks tbody tr")).filter(tr => tr.querySelector("th a")).map(tr =>
		[tr.querySelector("th a").textContent].concat(Array.from(tr.querySelectorAll("td")).map(td => td.textContent.trim())))`)
	out := map[string][]string{}
	for _, r := range rows {
		out[r[0]] = r[1:]
	}
	return out
}

func getOverview(t *testing.T, u string) lockview.Overview {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var o lockview.Overview
	require.NoError(t, json.Unmarshal(b, &o), "%s", b)
	return o
}

// summary is what the JSON says of each lock that the page shows too:
// path, holders' ids and the token, and the number waiting.
func summary(o lockview.Overview) string {
	var lines []string
	for _, l := range o.Locks {
		var ids []string
		for _, h := range l.Holders {
			ids = append(ids, h.ID)
		}
		token := "–"
		if len(l.Holders) > 0 {
			token = fmt.Sprint(l.Token)
		}
		lines = append(lines, fmt.Sprintf("%s ids=%s token=%s waiting=%d", l.Path, strings.Join(ids, ","), token, l.Waiting))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// pageSummary is the same, read off the page's table.
func pageSummary(rows map[string][]string) string {
	var lines []string
	for p, cells := range rows {
		ids := ""
		if cells[1] != "free" {
			ids = strings.Fields(cells[1])[0] // "id session"
		}
		lines = append(lines, fmt.Sprintf("%s ids=%s token=%s waiting=%s", p, ids, cells[3], cells[4]))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// consClient is the client address (ip:port) of session sid, as the
// member's cons says.
func consClient(t *testing.T, c *zktest.Cluster, sid int64) string {
	t.Helper()
	out, err := c.FourLetter(0, "cons")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*/(\S+):(\d+)\[\d+\]\(.*sid=` + fmt.Sprintf("0x%x", uint64(sid)) + `[,)]`).FindStringSubmatch(out)
	require.NotNil(t, m, "session 0x%x in cons:\n%s", uint64(sid), out)
	return m[1] + ":" + m[2]
}
