package zklock

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

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

// FullPath returns the znode path of a caller's path p on this session (p
// under the namespace, if any): what to give Session.Conn for it.
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
