package main

// One log stream: every line zklock prints about itself at run time (its
// errors, warnings, -v's progress, and the library's own logging) goes
// through one slog handler, as text or JSON (--log-format) at one level
// (--log-level). Usage errors are not logged: they are printed plainly
// before the configuration, and so the format, is known.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

const (
	logFormatText = "text"
	logFormatJSON = "json"
)

// logPrefix begins every text line, and the library's messages; it is
// taken off the messages so that each format carries it once (text) or
// not at all (JSON, where the source is the stream).
const logPrefix = "zklock: "

func applyLogFormat(c *config, v string) error {
	if v != logFormatText && v != logFormatJSON {
		return fmt.Errorf("want %s or %s", logFormatText, logFormatJSON)
	}
	c.logFormat = v
	return nil
}

// applyLogLevel parses --log-level; empty leaves the default (warn, or info
// with -v).
func applyLogLevel(c *config, v string) error {
	c.logLevelSet = v != ""
	if v == "" {
		return nil
	}
	switch strings.ToLower(v) {
	case "debug":
		c.logLevel = slog.LevelDebug
	case "info":
		c.logLevel = slog.LevelInfo
	case "warn", "warning":
		c.logLevel = slog.LevelWarn
	case "error":
		c.logLevel = slog.LevelError
	default:
		return errors.New("want debug, info, warn or error")
	}
	return nil
}

// level is the level zklock logs at: --log-level, else info with -v, else
// warn (errors and warnings only, as zklock printed them before -v).
func (c *config) level() slog.Level {
	switch {
	case c.logLevelSet:
		return c.logLevel
	case c.verbose:
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// newLogger returns the logger of the one stream on w.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	w = &lockedWriter{w: w}
	if format == logFormatJSON {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: trimPrefix}))
	}
	return slog.New(&textHandler{w: w, level: level})
}

// trimPrefix takes logPrefix off a JSON record's message.
func trimPrefix(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.MessageKey {
		a.Value = slog.StringValue(strings.TrimPrefix(a.Value.String(), logPrefix))
	}
	return a
}

// lockedWriter makes each record one write, in order, whatever goroutine
// logs it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// textHandler writes "zklock: MESSAGE key=value ...", one line a record,
// for people: no time (a terminal, journald or a container runtime adds
// one) and no level but for warnings and debug lines; values with spaces,
// quotes or control characters quoted as Go strings.
type textHandler struct {
	w      io.Writer
	level  slog.Level
	attrs  []byte // preformatted attributes of WithAttrs
	groups string // the group prefix of WithGroup, "a.b."
}

func (h *textHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *textHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	b.WriteString(logPrefix)
	switch {
	case r.Level >= slog.LevelError:
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	case r.Level < slog.LevelInfo:
		b.WriteString("debug: ")
	}
	b.WriteString(escapeControls(strings.TrimPrefix(r.Message, logPrefix)))
	b.Write(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.groups, a)
		return true
	})
	b.WriteByte('\n')
	_, err := h.w.Write(b.Bytes())
	return err
}

func (h *textHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b bytes.Buffer
	for _, a := range as {
		appendAttr(&b, h.groups, a)
	}
	n := *h
	n.attrs = append(slices.Clip(h.attrs), b.Bytes()...)
	return &n
}

func (h *textHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	n := *h
	n.groups += name + "."
	return &n
}

func appendAttr(b *bytes.Buffer, prefix string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range a.Value.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	var v string
	switch a.Value.Kind() {
	case slog.KindDuration:
		v = a.Value.Duration().String()
	case slog.KindTime:
		v = a.Value.Time().Format(time.RFC3339Nano)
	default:
		v = a.Value.String()
	}
	b.WriteByte(' ')
	b.WriteString(prefix + a.Key)
	b.WriteByte('=')
	if v == "" || strings.IndexFunc(v, func(r rune) bool { return r == '"' || r == '=' || unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}
