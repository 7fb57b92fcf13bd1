package zklock

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-zookeeper/zk"
)

// Node-name markers: the text before a node's sequence number. Ours are
// Curator's; kazoo's are recognised so that its nodes count as contenders.
const (
	markLock   = "lock-"     // Curator InterProcessMutex, LeaderSelector; go-zookeeper's Lock
	markRead   = "__READ__"  // Curator read lock
	markWrite  = "__WRIT__"  // Curator write lock
	markLease  = "lease-"    // Curator SemaphoreV2 lease
	markLatch  = "latch-"    // Curator LeaderLatch
	markKLock  = "__lock__"  // kazoo Lock and WriteLock
	markKRLock = "__rlock__" // kazoo ReadLock
)

// Kind is what a contender in a lock directory is, judged by its name.
type Kind string

// Kinds of participants, as `zklock status` prints them.
const (
	KindLock    Kind = "lock"    // an exclusive mutex node (Curator, go-zookeeper, zklock)
	KindRead    Kind = "read"    // a read-lock node
	KindWrite   Kind = "write"   // a write-lock node
	KindLease   Kind = "lease"   // a semaphore lease
	KindLatch   Kind = "latch"   // a LeaderLatch participant
	KindForeign Kind = "foreign" // another library's node that still counts (kazoo's)
)

var markers = []struct {
	mark string
	kind Kind
}{
	{markLock, KindLock}, {markRead, KindRead}, {markWrite, KindWrite},
	{markLease, KindLease}, {markLatch, KindLatch},
	{markKLock, KindForeign}, {markKRLock, KindForeign},
}

// contender is one child of a lock directory that takes part in the queue.
type contender struct {
	name string
	kind Kind
	seq  int32
	read bool // shares with other readers (Curator __READ__, kazoo __rlock__)
}

// parseContender reads a child name. A child counts if, after the last
// occurrence of one of the known markers, it ends in a ZooKeeper sequence
// number ("%010d" of a signed 32-bit counter, so "-000000001" or
// "-2147483648" after a wrap). Curator keys its own nodes the same way (the
// text after the last occurrence of the lock name); counting kazoo and
// go-zookeeper nodes too makes us never less conservative than Curator.
func parseContender(name string) (contender, bool) {
	best, bestAt := contender{}, -1
	for _, m := range markers {
		i := strings.LastIndex(name, m.mark)
		if i < 0 || i <= bestAt {
			continue
		}
		seq, ok := parseSeq(name[i+len(m.mark):])
		if !ok {
			continue
		}
		best, bestAt = contender{name: name, kind: m.kind, seq: seq}, i
		best.read = m.mark == markRead || m.mark == markKRLock
	}
	return best, bestAt >= 0
}

// parseSeq parses a sequence suffix: 10 digits, or a minus sign and 9 or 10.
func parseSeq(s string) (int32, bool) {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) < 9 || len(digits) > 10 || (digits == s && len(digits) != 10) {
		return 0, false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err == nil
}

// seqCompare orders sequence numbers by serial-number arithmetic (RFC 1982):
// a comes before b if b is less than 2^31 ahead of a. After the counter wraps
// from 2147483647 to -2147483648 the wrapped node still comes last, where a
// plain or lexicographic comparison would let it jump the queue.
func seqCompare(a, b int32) int {
	d := b - a // wraps, by design
	switch {
	case d == 0:
		return 0
	case d > 0:
		return -1
	}
	return 1
}

// sortContenders parses and orders a directory listing; children that are
// not contenders are left out. Equal sequences (a Curator 5.5 downgrade read
// node shares its write node's sequence) are ordered by name.
func sortContenders(children []string) []contender {
	cs := make([]contender, 0, len(children))
	for _, name := range children {
		if c, ok := parseContender(name); ok {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b contender) int {
		if c := seqCompare(a.seq, b.seq); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	if negStringSort { // test-only (negative_off.go)
		slices.SortFunc(cs, func(a, b contender) int { return cmp.Compare(a.name, b.name) })
	}
	return cs
}

func indexOf(cs []contender, name string) int {
	for i := range cs {
		if cs[i].name == name {
			return i
		}
	}
	return -1
}

// protectedPrefix returns Curator's protected-mode prefix, "_c_" + a fresh
// random lowercase dashed UUID + "-", 40 characters.
func protectedPrefix() string {
	var b [16]byte
	_, _ = rand.Read(b[:])  // never fails: crypto/rand crashes the program rather than return an error
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b[:])
	return "_c_" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32] + "-"
}

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
