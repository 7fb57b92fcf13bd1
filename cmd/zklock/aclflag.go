package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-zookeeper/zk"

	"github.com/zklock/zklock"
)

// parseACLFlag parses --acl: comma-separated entries, each "creator",
// "world", "world:read" or "scheme:id:perms" (zklock.ParseACL's text); an
// entry in double quotes may hold commas (an x509 distinguished name),
// with \" and \\ for a quote and a backslash. Each entry is checked as
// ZooKeeper would (its error says what is wrong with it), and the ACL as
// a whole must grant READ, CREATE and DELETE to someone: a lock directory
// zklock creates is listed, holds the lock nodes, and loses them again.
func parseACLFlag(text string) ([]zk.ACL, error) {
	entries, err := splitACL(text)
	if err != nil {
		return nil, err
	}
	var acl []zk.ACL
	for _, e := range entries {
		a, err := parseACLFlagEntry(e)
		if err != nil {
			return nil, err
		}
		acl = append(acl, a...)
	}
	var all int32
	for _, a := range acl {
		all |= a.Perms
	}
	var missing []string
	for _, p := range []struct {
		bit  int32
		name string
	}{{zk.PermRead, "READ (r): no one could list the lock's queue"}, {zk.PermCreate, "CREATE (c): no one could create a lock node in a directory zklock creates"},
		{zk.PermDelete, "DELETE (d): no one could release a lock (delete its node)"}} {
		if all&p.bit == 0 {
			missing = append(missing, p.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the ACL grants no one %s; nothing was created", strings.Join(missing, ", nor "))
	}
	return acl, nil
}

// splitACL splits text at the commas outside double quotes, and unquotes
// the quoted entries.
func splitACL(text string) ([]string, error) {
	var (
		entries []string
		b       strings.Builder
		quoted  bool // inside quotes
		wasQ    bool // the current entry was quoted
	)
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case quoted && c == '\\':
			if i+1 == len(text) || (text[i+1] != '"' && text[i+1] != '\\') {
				return nil, fmt.Errorf("ACL entry %q: in quotes, \\ is followed by \" or \\ only", b.String())
			}
			i++
			b.WriteByte(text[i])
		case quoted && c == '"':
			quoted = false
		case quoted:
			b.WriteByte(c)
		case c == '"':
			if strings.TrimSpace(b.String()) != "" || wasQ {
				return nil, fmt.Errorf("ACL entry %q: a quote opens an entry only at its start", b.String()+`"`)
			}
			b.Reset()
			quoted, wasQ = true, true
		case c == ',':
			entries = append(entries, b.String())
			b.Reset()
			wasQ = false
		case wasQ && c != ' ':
			return nil, fmt.Errorf("ACL entry %q: text after its closing quote", b.String())
		default:
			b.WriteByte(c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("ACL entry %q: no closing quote", b.String())
	}
	return append(entries, b.String()), nil
}

// parseACLFlagEntry parses and checks one entry.
func parseACLFlagEntry(entry string) ([]zk.ACL, error) {
	entry = strings.TrimSpace(entry)
	switch entry {
	case "":
		return nil, errors.New(`an empty ACL entry (two commas, or one at an end): want creator, world, world:read or scheme:id:perms`)
	case "creator", "world", "world:read":
		return zklock.ParseACL(entry)
	}
	i, j := strings.Index(entry, ":"), strings.LastIndex(entry, ":")
	bad := func(format string, args ...any) error {
		return fmt.Errorf("ACL entry %q: %s", entry, fmt.Sprintf(format, args...))
	}
	switch {
	case i < 0:
		return nil, bad("no ':': want creator, world, world:read or scheme:id:perms")
	case i == j:
		return nil, bad("one ':': want scheme:id:perms (perms letters of rwcda)")
	case i == 0:
		return nil, bad("no scheme before the first ':'")
	}
	scheme, id, letters := entry[:i], entry[i+1:j], entry[j+1:]
	if letters == "" {
		return nil, bad("no perms after the last ':': want letters of rwcda")
	}
	var perms int32
	for _, r := range letters {
		bit := map[rune]int32{'r': zk.PermRead, 'w': zk.PermWrite, 'c': zk.PermCreate, 'd': zk.PermDelete, 'a': zk.PermAdmin}[r]
		if bit == 0 || perms&bit != 0 {
			return nil, bad("perms %q: want letters of rwcda, each once", letters)
		}
		perms |= bit
	}
	a := []zk.ACL{{Perms: perms, Scheme: scheme, ID: id}}
	switch scheme {
	case "world":
		if id != "anyone" {
			return nil, bad("the world scheme has one id, anyone (not %q)", id)
		}
	case "auth":
		// ZooKeeper puts the creator's identities in place of the id.
	case "digest":
		user, hash, ok := strings.Cut(id, ":")
		if raw, err := base64.StdEncoding.DecodeString(hash); !ok || user == "" || strings.Contains(hash, ":") || err != nil || len(raw) != 20 {
			return nil, bad("a digest id is USER:HASH, HASH the base64 SHA-1 of USER:PASSWORD (28 characters), not %q", id)
		}
	case "ip":
		if _, _, err := net.ParseCIDR(id); err != nil && net.ParseIP(id) == nil {
			return nil, bad("an ip id is an address or a CIDR range (10.0.0.0/8), not %q", id)
		}
	default: // x509, sasl, or a scheme of a provider the ensemble has
		if id == "" {
			return nil, bad("no id between the scheme and the perms")
		}
		if strings.ContainsAny(id, "\r\n") {
			return nil, bad("a line break in the id")
		}
	}
	return a, nil
}
