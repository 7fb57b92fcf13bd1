package zklock

// ACL presets for WithACL, and their text form (`zklock --acl`).

import (
	"fmt"
	"strings"

	"github.com/go-zookeeper/zk"
)

// CreatorACL gives every right to the identities the creating session
// authenticated with (WithAuth), and none to anyone else: ZooKeeper's
// "auth" scheme, Curator's ZooDefs.Ids.CREATOR_ALL_ACL. Nodes made with it
// cannot be read, deleted, revoked or queued in by a client without the
// same credentials. ZooKeeper refuses it from a session without
// credentials (zk.ErrInvalidACL: the acquire fails with ErrNotAuthorized).
func CreatorACL() []zk.ACL { return zk.AuthACL(zk.PermAll) }

// CreatorWorldReadACL is CreatorACL plus READ for anyone: others may see the
// queue (`zklock status`, Participants, observers) but not touch it.
func CreatorWorldReadACL() []zk.ACL {
	return append(CreatorACL(), zk.WorldACL(zk.PermRead)...)
}

// WorldACL gives every right to anyone, zk.WorldACL(zk.PermAll): the
// default of WithACL, as Curator's.
func WorldACL() []zk.ACL { return zk.WorldACL(zk.PermAll) }

// ParseACL parses the text form of an ACL, as `zklock --acl` takes it: a
// comma-separated list of "creator" (CreatorACL), "world" (WorldACL),
// "world:read" (READ for anyone) and explicit "scheme:id:perms" entries,
// perms being letters of "rwcda" (read, write, create, delete, admin), as
// ZooKeeper's own CLI writes them ("digest:alice:HASH:rwcda",
// "ip:10.0.0.0/8:r"). It returns an error wrapping ErrInvalidArgument for
// anything else; it does not check that the ids exist.
func ParseACL(text string) ([]zk.ACL, error) {
	var acl []zk.ACL
	for entry := range strings.SplitSeq(text, ",") {
		switch entry = strings.TrimSpace(entry); entry {
		case "creator":
			acl = append(acl, CreatorACL()...)
		case "world":
			acl = append(acl, WorldACL()...)
		case "world:read":
			acl = append(acl, zk.WorldACL(zk.PermRead)...)
		default:
			a, err := parseACLEntry(entry)
			if err != nil {
				return nil, err
			}
			acl = append(acl, a)
		}
	}
	return acl, nil
}

// parseACLEntry parses "scheme:id:perms"; the id may hold colons (a
// digest's "user:hash").
func parseACLEntry(entry string) (zk.ACL, error) {
	i, j := strings.Index(entry, ":"), strings.LastIndex(entry, ":")
	if i <= 0 || j == i {
		return zk.ACL{}, fmt.Errorf("%w: ACL entry %q: want creator, world, world:read or scheme:id:perms", ErrInvalidArgument, entry)
	}
	scheme, id, letters := entry[:i], entry[i+1:j], entry[j+1:]
	var perms int32
	for _, r := range letters {
		bit, ok := map[rune]int32{'r': zk.PermRead, 'w': zk.PermWrite, 'c': zk.PermCreate, 'd': zk.PermDelete, 'a': zk.PermAdmin}[r]
		if !ok || perms&bit != 0 {
			return zk.ACL{}, fmt.Errorf("%w: ACL entry %q: perms %q: want letters of rwcda, each once", ErrInvalidArgument, entry, letters)
		}
		perms |= bit
	}
	if perms == 0 {
		return zk.ACL{}, fmt.Errorf("%w: ACL entry %q: no perms", ErrInvalidArgument, entry)
	}
	return zk.ACL{Perms: perms, Scheme: scheme, ID: id}, nil
}

// needsAuth reports whether acl names the creator's identities ("auth"),
// which ZooKeeper refuses from a session without credentials.
func needsAuth(acl []zk.ACL) bool {
	for _, a := range acl {
		if a.Scheme == "auth" {
			return true
		}
	}
	return false
}
