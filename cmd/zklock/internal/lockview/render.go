package lockview

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"
)

// lockURL is the page of the lock at the caller's path p.
func lockURL(p string) string {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, e := range parts {
		parts[i] = url.PathEscape(e)
	}
	return "/lock/" + strings.Join(parts, "/")
}

// ago renders a time as an age that the page's script keeps ticking.
func ago(t time.Time) template.HTML {
	if t.IsZero() {
		return "–"
	}
	return template.HTML(fmt.Sprintf(`<time datetime="%s" data-since="%d">%s</time>`,
		t.UTC().Format(time.RFC3339), t.UnixMilli(), age(t, time.Now())))
}

// shortName shortens a protected node name: its 36-character uuid to 8.
func shortName(n string) string {
	if m := curatorName.FindString(n); m != "" {
		return n[:11] + "…" + n[len(m)-1:]
	}
	return n
}

// byteSize is a data length as the page shows it: 1.0 MB, 12 kB, 300 B.
func byteSize(n int32) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// clientText is where a session connects from: ip:port (name), or – if
// not known.
func clientText(c *Client) string {
	switch {
	case c == nil:
		return "–"
	case c.Name != "":
		return c.Addr + " (" + c.Name + ")"
	}
	return c.Addr
}
