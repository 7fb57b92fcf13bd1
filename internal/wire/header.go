package wire

import (
	"encoding/binary"
	"fmt"
)

// Request opcodes (org.apache.zookeeper.ZooDefs.OpCode).
const (
	OpNotification      int32 = 0
	OpCreate            int32 = 1
	OpDelete            int32 = 2
	OpExists            int32 = 3
	OpGetData           int32 = 4
	OpSetData           int32 = 5
	OpGetACL            int32 = 6
	OpSetACL            int32 = 7
	OpGetChildren       int32 = 8
	OpSync              int32 = 9
	OpPing              int32 = 11
	OpGetChildren2      int32 = 12
	OpCheck             int32 = 13
	OpMulti             int32 = 14
	OpCreate2           int32 = 15
	OpReconfig          int32 = 16
	OpCheckWatches      int32 = 17
	OpRemoveWatches     int32 = 18
	OpCreateContainer   int32 = 19
	OpDeleteContainer   int32 = 20
	OpCreateTTL         int32 = 21
	OpMultiRead         int32 = 22
	OpAuth              int32 = 100
	OpSetWatches        int32 = 101
	OpSASL              int32 = 102
	OpGetEphemerals     int32 = 103
	OpGetAllChildrenNum int32 = 104
	OpSetWatches2       int32 = 105
	OpAddWatch          int32 = 106
	OpWhoAmI            int32 = 107
	OpCreateSession     int32 = -10
	OpCloseSession      int32 = -11
	OpError             int32 = -1
)

// Special xids used by clients and servers.
const (
	XidWatchEvent int32 = -1 // server -> client watch notification
	XidPing       int32 = -2
	XidAuth       int32 = -4
	XidSetWatches int32 = -8
)

// IsCreate reports whether op creates a node: create, create2,
// createContainer or createTTL. (A multi may also create nodes; it is not
// counted here.)
func IsCreate(op int32) bool {
	switch op {
	case OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL:
		return true
	}
	return false
}

// RequestHeader starts every client frame after the ConnectRequest.
type RequestHeader struct {
	Xid  int32
	Type int32 // an Op* opcode
}

// ReplyHeader starts every server frame after the ConnectResponse. Err is a
// ZooKeeper error code (0 for success, e.g. -101 for NoNode).
type ReplyHeader struct {
	Xid  int32
	Zxid int64
	Err  int32
}

// RequestHeaderLen and ReplyHeaderLen are the encoded header sizes.
const (
	RequestHeaderLen = 8
	ReplyHeaderLen   = 16
)

// ParseRequestHeader decodes the RequestHeader at the start of a client
// frame payload; the request body, if any, follows at p[RequestHeaderLen:].
func ParseRequestHeader(p []byte) (RequestHeader, error) {
	if len(p) < RequestHeaderLen {
		return RequestHeader{}, fmt.Errorf("%w: request header needs %d bytes, have %d", ErrMalformed, RequestHeaderLen, len(p))
	}
	return RequestHeader{
		Xid:  int32(binary.BigEndian.Uint32(p)),
		Type: int32(binary.BigEndian.Uint32(p[4:])),
	}, nil
}

// AppendRequestHeader appends the encoding of h to dst.
func AppendRequestHeader(dst []byte, h RequestHeader) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Xid))
	return binary.BigEndian.AppendUint32(dst, uint32(h.Type))
}

// ParseReplyHeader decodes the ReplyHeader at the start of a server frame
// payload; the response body, if any, follows at p[ReplyHeaderLen:].
func ParseReplyHeader(p []byte) (ReplyHeader, error) {
	if len(p) < ReplyHeaderLen {
		return ReplyHeader{}, fmt.Errorf("%w: reply header needs %d bytes, have %d", ErrMalformed, ReplyHeaderLen, len(p))
	}
	return ReplyHeader{
		Xid:  int32(binary.BigEndian.Uint32(p)),
		Zxid: int64(binary.BigEndian.Uint64(p[4:])),
		Err:  int32(binary.BigEndian.Uint32(p[12:])),
	}, nil
}

// AppendReplyHeader appends the encoding of h to dst.
func AppendReplyHeader(dst []byte, h ReplyHeader) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(h.Xid))
	dst = binary.BigEndian.AppendUint64(dst, uint64(h.Zxid))
	return binary.BigEndian.AppendUint32(dst, uint32(h.Err))
}
