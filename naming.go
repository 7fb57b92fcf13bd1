package zklock

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
)

// ZooKeeper's limits on what a request may carry.
const (
	// maxRequest is ZooKeeper's default jute.maxbuffer: a server closes the
	// connection of a client that sends a larger packet, so one oversized
	// request would make the whole session flap.
	maxRequest = 0xfffff
	// nodeSuffix bounds what a recipe adds to its lock path to name a node:
	// "/leases" or "/locks", then "/", the protected prefix (40), the longest
	// marker (9) and a sequence (11).
	nodeSuffix = len("/leases") + 1 + 40 + 9 + 11
	// requestOverhead bounds a create's framing: the header, the lengths of
	// the path, data and ACL list, and the flags.
	requestOverhead = 64
	// maxPath is the longest lock path whose every request fits.
	maxPath = maxRequest - requestOverhead - nodeSuffix
)

// ValidatePath checks a lock path as ZooKeeper's PathUtils.validatePath
// does, and as every constructor does: absolute, not the root, no trailing
// slash, no empty, "." or ".." element, no NUL, control or other character
// that ZooKeeper refuses, valid UTF-8, not under ZooKeeper's reserved
// /zookeeper tree, and short enough that every request on it fits in
// ZooKeeper's default jute.maxbuffer (1 MiB). It returns an error wrapping
// ErrInvalidPath (and so ErrInvalidArgument) that says what is wrong.
func ValidatePath(p string) error {
	if reason := pathProblem(p); reason != "" {
		if len(p) > 64 {
			p = p[:64] + "..."
		}
		return fmt.Errorf("%w %q: %s", ErrInvalidPath, p, reason)
	}
	return nil
}

func pathProblem(p string) string {
	switch {
	case p == "":
		return "empty"
	case p[0] != '/':
		return "not absolute"
	case p == "/":
		return "the root cannot be a lock"
	case strings.HasSuffix(p, "/"):
		return "ends with /"
	case len(p) > maxPath:
		return fmt.Sprintf("%d bytes long, over the %d that fit in ZooKeeper's default jute.maxbuffer", len(p), maxPath)
	case !utf8.ValidString(p):
		return "not valid UTF-8"
	case p == "/zookeeper" || strings.HasPrefix(p, "/zookeeper/"):
		return "under /zookeeper, ZooKeeper's reserved tree"
	}
	for i, r := range p {
		if !pathRune(r) {
			return fmt.Sprintf("character %U at byte %d is not allowed", r, i)
		}
	}
	for _, el := range strings.Split(p[1:], "/") {
		switch el {
		case "":
			return "empty element (//)"
		case ".", "..":
			return "relative element " + el
		}
	}
	return ""
}

// pathRune reports whether ZooKeeper accepts r in a path: its validatePath
// refuses NUL, the C0 and C1 controls and DEL, U+D800 to U+F8FF, U+FFF0 to
// U+FFFF, and (as Java sees them, as surrogate pairs) everything above
// U+FFFF.
func pathRune(r rune) bool {
	switch {
	case r <= 0x1f, r >= 0x7f && r <= 0x9f:
		return false
	case r >= 0xd800 && r <= 0xf8ff, r >= 0xfff0:
		return false
	}
	return true
}

// checkRequestSize refuses a lock whose create request (a node under path,
// with data and acl) would not fit in ZooKeeper's default jute.maxbuffer.
func checkRequestSize(path string, data []byte, acl []zk.ACL) error {
	n := requestOverhead + len(path) + nodeSuffix + len(data)
	for _, a := range acl {
		n += 12 + len(a.Scheme) + len(a.ID)
	}
	if n > maxRequest {
		return fmt.Errorf("%w: a create on %.64q with %d bytes of data needs %d bytes, over ZooKeeper's default jute.maxbuffer (%d)",
			ErrInvalidArgument, path, len(data), n, maxRequest)
	}
	return nil
}
