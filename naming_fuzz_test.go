package zklock

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// javaValidatePath is ZooKeeper's PathUtils.validatePath, restated over
// UTF-16 code units as Java sees a string, as the oracle for ValidatePath:
// it returns why ZooKeeper refuses p, or "" if it accepts it.
func javaValidatePath(p string) string {
	if p == "" {
		return "empty"
	}
	cs := utf16.Encode([]rune(p))
	if cs[0] != '/' {
		return "not absolute"
	}
	if len(cs) == 1 {
		return ""
	}
	if cs[len(cs)-1] == '/' {
		return "trailing slash"
	}
	last := uint16('/')
	for i := 1; i < len(cs); last, i = cs[i], i+1 {
		c := cs[i]
		switch {
		case c == 0:
			return "null character"
		case c == '/' && last == '/':
			return "empty node name"
		case c == '.' && last == '.':
			if cs[i-2] == '/' && (i+1 == len(cs) || cs[i+1] == '/') {
				return "relative path"
			}
		case c == '.':
			if cs[i-1] == '/' && (i+1 == len(cs) || cs[i+1] == '/') {
				return "relative path"
			}
		case c > 0 && c <= 0x1f, c >= 0x7f && c <= 0x9f, c >= 0xd800 && c <= 0xf8ff, c >= 0xfff0:
			return "invalid character"
		}
	}
	return ""
}

// FuzzValidatePath: ValidatePath never panics, never accepts a path that
// ZooKeeper refuses, and refuses one ZooKeeper accepts only for its own
// stricter rules (the root, /zookeeper, length, invalid UTF-8).
func FuzzValidatePath(f *testing.F) {
	for _, p := range []string{"/locks/a", "/a//b", "/a/./b", "/a/..", "/zookeeper/x", "/a\x00", "/\u00e9", "/\U0001F512", "/a/.b."} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := ValidatePath(p)
		java := ""
		if utf8.ValidString(p) {
			java = javaValidatePath(p)
		}
		switch {
		case err == nil && java != "":
			t.Fatalf("ValidatePath accepts %q, which ZooKeeper refuses: %s", p, java)
		case err == nil && !utf8.ValidString(p):
			t.Fatalf("ValidatePath accepts invalid UTF-8 %q", p)
		case err != nil && java == "" && utf8.ValidString(p) && p != "/" && len(p) <= maxPath &&
			p != "/zookeeper" && !strings.HasPrefix(p, "/zookeeper/"):
			t.Fatalf("ValidatePath refuses %q, which ZooKeeper accepts: %v", p, err)
		}
	})
}

// FuzzParseContender: parsing a child name never panics, and a name it
// accepts ends in the sequence it reports, right after a known marker.
func FuzzParseContender(f *testing.F) {
	for _, n := range []string{"_c_8a1b2c3d-0000-4000-8000-000000000000-lock-0000000001", "x__READ__0000000010",
		"lease-2147483647", "a-lock--2147483648", "__rlock__-000000001", "lock-123", "lock-00000000001", "latch-0000000000lock-0000000002"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		c, ok := parseContender(name)
		if !ok {
			return
		}
		if c.name != name {
			t.Fatalf("parsed %q as %q", name, c.name)
		}
		found := false
		for _, m := range markers {
			i := strings.LastIndex(name, m.mark)
			if i < 0 {
				continue
			}
			if n, err := strconv.ParseInt(name[i+len(m.mark):], 10, 32); err == nil && int32(n) == c.seq && m.kind == c.kind {
				found = true
			}
		}
		if !found {
			t.Fatalf("%q: no marker of kind %s is followed by sequence %d", name, c.kind, c.seq)
		}
		if c.kind == KindRead && !c.read || c.kind == KindWrite && c.read {
			t.Fatalf("%q: kind %s but read=%v", name, c.kind, c.read)
		}
	})
}
