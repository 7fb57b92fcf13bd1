package wire

import (
	"encoding/binary"
	"fmt"
)

// EventNodeDeleted is the WatcherEvent type of a node's deletion
// (org.apache.zookeeper.Watcher.Event.EventType.NodeDeleted).
const EventNodeDeleted int32 = 2

// Notification is the body of a watch notification (xid -1): a
// WatcherEvent.
type Notification struct {
	Type  int32
	State int32
	Path  string
}

// ParseNotification decodes the WatcherEvent that follows the ReplyHeader
// of a notification, from body (the payload after ReplyHeaderLen). It
// fails with ErrMalformed when body is shorter than the event: a caller
// that keeps only a frame's head gets an error for a path that does not
// fit, never a truncated path.
func ParseNotification(body []byte) (Notification, error) {
	if len(body) < 12 {
		return Notification{}, fmt.Errorf("%w: notification needs 12 bytes, have %d", ErrMalformed, len(body))
	}
	n := Notification{Type: int32(binary.BigEndian.Uint32(body)), State: int32(binary.BigEndian.Uint32(body[4:]))}
	l := int32(binary.BigEndian.Uint32(body[8:]))
	if l < 0 || int64(l) > int64(len(body)-12) {
		return Notification{}, fmt.Errorf("%w: notification path of %d bytes, %d kept", ErrMalformed, l, len(body)-12)
	}
	n.Path = string(body[12 : 12+l])
	return n, nil
}
