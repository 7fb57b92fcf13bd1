package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"
)

// Revoke asks the holder of the lock node at nodePath to release it, by
// writing Curator's "__REVOKE__" to the node, as Curator's
// Revoker.attemptRevoke does. It reaches zklock holds made with
// WithRevocable and Curator locks made revocable; other holders ignore it.
// nodePath is the caller's path, as Hold.Node and Participant.Path give it
// (on a session with a namespace, WithNamespace, the namespace is added),
// and must name a contender's node, not a lock path: anything whose name is
// not a lock node's is refused with ErrInvalidArgument, and nothing is
// written. A node that is already gone is not an error. The request is
// bounded by ctx; a nil ctx or session is an error wrapping
// ErrInvalidArgument, a closed session ErrClosed.
func Revoke(ctx context.Context, s *Session, nodePath string) error {
	if s == nil {
		return fmt.Errorf("%w: nil session", ErrInvalidArgument)
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	if err := ValidatePath(nodePath); err != nil {
		return err
	}
	if _, ok := parseContender(path.Base(nodePath)); !ok {
		return fmt.Errorf("%w: %s is not a lock node (a lock path? revoke one of its participants' nodes)", ErrInvalidArgument, nodePath)
	}
	if err := s.waitReady(ctx); err != nil { // credentials first, as for a lock
		return err
	}
	err := s.setData(ctx, s.FullPath(nodePath), revokeMessage)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("zklock: revoke %s: %w", nodePath, err)
	}
	return nil
}
