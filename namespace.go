package zklock

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// WithNamespace roots every path of the session under /ns, as Curator's
// CuratorFrameworkFactory.Builder.namespace does: a Mutex at "/locks/x" on a
// session with namespace "app" uses the znode /app/locks/x, and excludes a
// Curator InterProcessMutex at "/locks/x" whose client has namespace "app",
// or one at "/app/locks/x" without a namespace.
//
// The namespace is written without a leading slash ("app", or "app/sub" for
// a nested one). It must make a valid path when prefixed with "/": no
// leading or trailing slash, no empty, "." or ".." element, none of the
// control or reserved characters ZooKeeper refuses in a path; Connect
// returns an error wrapping ErrInvalidPath otherwise (Curator rejects the
// same names). The empty namespace means none, as in Curator.
//
// Every recipe (Mutex, SemaphoreMutex, Semaphore, RWLock, MultiLock members,
// LeaderElection, LeaderLatch), Participants, Revoke and Observe take and
// return paths as the caller sees them, without the namespace: Hold.Path,
// Hold.Node and Participant.Path do not carry it. Hold.Guard, made for the
// raw connection (Session.Conn), which knows nothing of namespaces, carries
// the full znode path, as do Event.Node and the znodes seen through
// Session.Conn; Session.FullPath converts a caller's path into one.
//
// The namespace node is created as Curator 5.4 creates it, a CONTAINER
// node with empty data (with the recipe's ACL), so that, like Curator's, the
// server reaps it once it has no children. Curator makes it at its client's
// first operation; zklock together with the lock's other missing parents,
// at the first create under it (a read such as Participants creates
// nothing). Default: no namespace.
func WithNamespace(ns string) SessionOption {
	return func(c *sessionConfig) { c.namespace = ns }
}

// ValidateNamespace checks a namespace as Connect does for WithNamespace:
// "" (none) or a name that makes a valid path when prefixed with "/". It
// returns nil or an error wrapping ErrInvalidPath.
func ValidateNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	if err := ValidatePath("/" + ns); err != nil {
		return fmt.Errorf("%w: namespace %q (no leading or trailing slash, no empty, \".\" or \"..\" element)", ErrInvalidPath, ns)
	}
	if !utf8.ValidString(ns) {
		return fmt.Errorf("%w: namespace %q is not UTF-8", ErrInvalidPath, ns)
	}
	for _, r := range ns {
		// The characters Curator's PathUtils.validatePath refuses.
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return fmt.Errorf("%w: namespace %q has the invalid character %U", ErrInvalidPath, ns, r)
		}
	}
	return nil
}

// Namespace returns the session's namespace, without a leading slash, or
// "" if it has none (Curator's getNamespace).
func (s *Session) Namespace() string { return s.cfg.namespace }

// FullPath returns the znode path of a caller's path p on this session: p
// under the namespace (WithNamespace), or p itself without one. It is what
// to give Session.Conn for a path a recipe names.
func (s *Session) FullPath(p string) string {
	if s.cfg.namespace == "" {
		return p
	}
	if p == "/" {
		return "/" + s.cfg.namespace
	}
	return "/" + s.cfg.namespace + p
}

// callerPath is FullPath's inverse, as Curator's unfixForNamespace: a znode
// path under the namespace loses it; the namespace node itself is "/".
func (s *Session) callerPath(p string) string {
	if s.cfg.namespace == "" {
		return p
	}
	root := "/" + s.cfg.namespace
	switch {
	case p == root:
		return "/"
	case strings.HasPrefix(p, root+"/"):
		return p[len(root):]
	}
	return p
}
