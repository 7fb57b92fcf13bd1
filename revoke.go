package zklock

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"
)

// revokeMessage is the data Curator's Revoker writes to ask a holder to
// release.
var revokeMessage = []byte("__REVOKE__")

// Revoke asks the holder of the lock node at nodePath to release it, by
// writing Curator's "__REVOKE__" to the node, as Curator's
// Revoker.attemptRevoke does. It reaches zklock holds made with
// WithRevocable and Curator locks made revocable; other holders ignore it.
// nodePath is the caller's path, as Hold.Node and Participant.Path give it:
// on a session with a namespace (WithNamespace) the namespace is added.
// A node that is already gone is not an error. ctx is checked before the
// request; a nil ctx or session is an error wrapping ErrInvalidArgument.
func Revoke(ctx context.Context, s *Session, nodePath string) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalidArgument)
	}
	if s == nil {
		return fmt.Errorf("%w: nil session", ErrInvalidArgument)
	}
	if err := ValidatePath(nodePath); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	if err := s.waitReady(ctx); err != nil { // credentials first, as for a lock
		return err
	}
	_, err := s.conn.Set(s.FullPath(nodePath), revokeMessage, -1)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		return fmt.Errorf("zklock: revoke %s: %w", nodePath, err)
	}
	return nil
}

// Revoked returns a channel closed when someone asks this hold's lock to be
// released (see WithRevocable and Revoke), or nil if the lock is not
// revocable. A request made while the hold was still queued is seen as soon
// as it is acquired. The hold stays valid: releasing is up to the holder.
func (h *Hold) Revoked() <-chan struct{} { return h.h.revoked }

// watchRevocation watches the holder's own node until the hold ends and
// closes revoked when its data becomes "__REVOKE__".
func (h *hold) watchRevocation() {
	for attempt := 0; ; {
		data, _, ch, err := h.s.conn.GetW(h.node)
		switch {
		case err == nil && bytes.Equal(data, revokeMessage):
			close(h.revoked)
			return
		case errors.Is(err, zk.ErrNoNode):
			return // the hold is ending; its loss or release reports it
		case err != nil:
			if h.s.cfg.retry.sleep(h.ctx, attempt) != nil {
				return
			}
			attempt++
			continue
		}
		select {
		case <-ch:
		case <-h.ctx.Done():
			return
		}
	}
}
