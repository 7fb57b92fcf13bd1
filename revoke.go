package zklock

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-zookeeper/zk"
)

// Revoke asks the holder of the lock node at nodePath to release it, by
// writing "__REVOKE__" to the node as Curator's Revoker.attemptRevoke does:
// holds made WithRevocable and revocable Curator locks see it, others
// ignore it. nodePath is a contender's node as Hold.Node and
// Participant.Path give it (the caller's path, without the namespace);
// anything else is refused with ErrInvalidArgument, writing nothing. A node
// already gone is not an error. ctx bounds the request; a nil ctx or
// session is an error wrapping ErrInvalidArgument, a closed session ErrClosed.
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
	if r := refused(err, accessWrite, nodePath, "a revocation request"); r != nil {
		return r
	}
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("zklock: revoke %s: %w", nodePath, err)
	}
	return nil
}
