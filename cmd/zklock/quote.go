package main

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// What zklock prints of names and data from ZooKeeper, and of error
// messages that carry them, never reaches the terminal raw: C0 and C1
// controls, bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069) and
// every other rune strconv.IsPrint refuses are escaped, so that a node
// cannot rewrite the screen or disguise its name. ZooKeeper refuses C0 and
// C1 in names, not bidi controls, and nothing in data.

// printable is s, or s quoted as a Go string if it holds a rune that is
// not printable (a space is) or is not UTF-8.
func printable(s string) string {
	for _, r := range s {
		if r == utf8.RuneError || r != ' ' && !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// escapeControls is s with each rune that is not printable (a space is)
// replaced by its Go escape (\n, \x1b, \u202e), for one line of a message.
func escapeControls(s string) string {
	if printable(s) == s {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case n == 1 && r == utf8.RuneError: // a byte that is not UTF-8
			q := strconv.Quote(s[i : i+1])
			b.WriteString(q[1 : len(q)-1])
		case r != ' ' && !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// jsonSafe writes JSON with every rune from U+0080 on that is not printable
// escaped as \uXXXX: encoding/json escapes the C0 controls (and U+2028,
// U+2029), not C1 or bidi controls. The JSON means the same.
type jsonSafe struct{ w io.Writer }

func (j jsonSafe) Write(p []byte) (int, error) {
	if safe(p) {
		return j.w.Write(p)
	}
	var b []byte
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		if r >= 0x80 && (n == 1 || !strconv.IsPrint(r)) { // n == 1: not UTF-8, written as U+FFFD
			for _, u := range utf16.Encode([]rune{r}) {
				b = append(b, `\u`...)
				b = append(b, "0123456789abcdef"[u>>12], "0123456789abcdef"[u>>8&15], "0123456789abcdef"[u>>4&15], "0123456789abcdef"[u&15])
			}
		} else {
			b = append(b, p[i:i+n]...)
		}
		i += n
	}
	if _, err := j.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// safe reports whether p has no rune jsonSafe escapes.
func safe(p []byte) bool {
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		if r >= 0x80 && (n == 1 || !strconv.IsPrint(r)) {
			return false
		}
		i += n
	}
	return true
}
