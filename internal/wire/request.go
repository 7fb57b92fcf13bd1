package wire

import (
	"encoding/binary"
	"fmt"
)

// PathRequest is the start of a client request whose body begins with the
// node's path, as decoded by ParsePathRequest.
type PathRequest struct {
	RequestHeader
	// Path is the node's path, aliasing the decoded payload.
	Path []byte
	// Watch is the request's watch flag, for the requests that have one
	// (exists, getData, getChildren, getChildren2); false for the others.
	Watch bool
}

// HasPath reports whether ParsePathRequest decodes the path of a request
// of type op: the create opcodes (see IsCreate), whose CreateRequest starts
// with the path, and the reads that carry a watch flag after the path
// (exists, getData, getChildren, getChildren2).
func HasPath(op int32) bool { return IsCreate(op) || HasWatch(op) }

// HasWatch reports whether a request of type op is a path followed by a
// watch flag: exists, getData, getChildren and getChildren2.
func HasWatch(op int32) bool {
	switch op {
	case OpExists, OpGetData, OpGetChildren, OpGetChildren2:
		return true
	}
	return false
}

// ParsePathRequest decodes the RequestHeader at the start of a client frame
// payload and, when HasPath(Type), the path that follows it and, when
// HasWatch(Type), the watch flag after the path; for other types Path is
// nil and the body is not read. Bytes after what it decodes (a create's
// data, ACL and flags) are ignored. Errors wrap ErrMalformed (a short
// payload, a negative or overlong path length, a missing watch flag); on
// error the result is zero.
func ParsePathRequest(p []byte) (PathRequest, error) {
	h, err := ParseRequestHeader(p)
	if err != nil {
		return PathRequest{}, err
	}
	r := PathRequest{RequestHeader: h}
	if !HasPath(h.Type) {
		return r, nil
	}
	body := p[RequestHeaderLen:]
	if len(body) < 4 {
		return PathRequest{}, fmt.Errorf("%w: request %d (type %d): path length needs 4 bytes, have %d", ErrMalformed, h.Xid, h.Type, len(body))
	}
	n := int32(binary.BigEndian.Uint32(body))
	if n < 0 || int64(n) > int64(len(body)-4) {
		return PathRequest{}, fmt.Errorf("%w: request %d (type %d): path length %d, %d bytes left", ErrMalformed, h.Xid, h.Type, n, len(body)-4)
	}
	r.Path = body[4 : 4+n : 4+n]
	if HasWatch(h.Type) {
		if len(body) < 5+int(n) {
			return PathRequest{}, fmt.Errorf("%w: request %d (type %d): no watch flag after the path", ErrMalformed, h.Xid, h.Type)
		}
		r.Watch = body[4+n] != 0
	}
	return r, nil
}

// AppendPathRequest appends the payload of a request made of a header, a
// path and, when HasWatch(h.Type), the watch flag; it is for tests and fake
// clients (a real create also carries data, an ACL and flags, which a
// caller appends after it).
func AppendPathRequest(dst []byte, h RequestHeader, path string, watch bool) []byte {
	dst = AppendRequestHeader(dst, h)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(path)))
	dst = append(dst, path...)
	if HasWatch(h.Type) {
		dst = append(dst, boolByte(watch))
	}
	return dst
}
