package lockview

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// events streams a page's live part (view=overview with q and sort, or
// lock=PATH) as server-sent events named "update", each the HTML of the
// part: one at once, then one after each change the view's watches see
// (at most one each 200ms), until the client goes or the server closes.
//
// At most MaxStreams are open at once; one more gets 503 with Retry-After
// (the page's EventSource retries by itself). A stream has no read
// deadline; each write has one of streamWriteTimeout, so a client that
// stops reading is dropped.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	select {
	case s.streams <- struct{}{}:
		defer func() { <-s.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("503 too many live pages: this server streams to at most %d at once (zklock ui --max-streams)", s.cfg.MaxStreams),
			http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the server's ReadTimeout would end the stream
	send := func(write func() error) error {
		if err := rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if err := write(); err != nil {
			return err
		}
		return rc.Flush()
	}
	q := r.URL.Query()
	render := func(b *bytes.Buffer) error {
		if p := q.Get("lock"); p != "" {
			pg, _ := s.lockPage(p)
			return s.tmpl.ExecuteTemplate(b, "lock-live", pg)
		}
		return s.tmpl.ExecuteTemplate(b, "overview-live", s.overviewPage(r))
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	keepalive := time.NewTicker(20 * time.Second)
	defer keepalive.Stop()
	var b bytes.Buffer
	for {
		changed := s.v.Changed()
		b.Reset()
		if err := render(&b); err != nil {
			return
		}
		if send(func() error { return writeEvent(w, "update", b.Bytes()) }) != nil {
			return
		}
		for waiting := true; waiting; {
			select {
			case <-changed:
				waiting = false
			case <-keepalive.C:
				if send(func() error { _, err := w.Write([]byte(": keepalive\n\n")); return err }) != nil {
					return
				}
			case <-r.Context().Done():
				return
			case <-s.quit:
				return
			}
		}
		select { // let a burst of changes settle into one update
		case <-time.After(200 * time.Millisecond):
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		}
	}
}

// streamWriteTimeout bounds each write of an event stream.
const streamWriteTimeout = 30 * time.Second

// writeEvent writes one server-sent event; each line of data is a data
// field (the client joins them with newlines).
func writeEvent(w http.ResponseWriter, name string, data []byte) error {
	var b bytes.Buffer
	b.WriteString("event: " + name + "\n")
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		b.WriteString("data: ")
		b.Write(bytes.TrimRight(line, "\r"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	_, err := w.Write(b.Bytes())
	return err
}
