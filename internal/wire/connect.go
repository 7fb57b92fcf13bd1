package wire

import (
	"encoding/binary"
	"fmt"
)

// ConnectRequest is the first frame a client sends on a new TCP connection.
// SessionID 0 asks for a new session; a non-zero SessionID with its Passwd
// re-attaches to (or, from a second connection, takes over) that session.
type ConnectRequest struct {
	ProtocolVersion int32
	LastZxidSeen    int64
	TimeoutMs       int32 // requested session timeout; the server clamps it
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool // trailing flag sent by 3.4+ clients
}

// ConnectResponse is the first frame a server sends on a client connection.
// A SessionID of 0 means the session asked for is expired, unknown or the
// password did not match; the server closes the connection after sending it.
type ConnectResponse struct {
	ProtocolVersion int32
	TimeoutMs       int32 // the negotiated session timeout
	SessionID       int64
	Passwd          []byte
	ReadOnly        bool
}

// minimal payload sizes: the fixed fields plus the buffer length.
const (
	connectRequestMin  = 4 + 8 + 4 + 8 + 4
	connectResponseMin = 4 + 4 + 8 + 4
)

// EncodeConnectRequest returns the payload of a ConnectRequest frame (no
// length prefix; see AppendFrame and WriteFrame). The readOnly flag is always
// written, as current clients do. A nil Passwd is encoded as a null buffer.
func EncodeConnectRequest(r ConnectRequest) []byte {
	b := make([]byte, 0, connectRequestMin+len(r.Passwd)+1)
	b = binary.BigEndian.AppendUint32(b, uint32(r.ProtocolVersion))
	b = binary.BigEndian.AppendUint64(b, uint64(r.LastZxidSeen))
	b = binary.BigEndian.AppendUint32(b, uint32(r.TimeoutMs))
	b = binary.BigEndian.AppendUint64(b, uint64(r.SessionID))
	b = appendBuffer(b, r.Passwd)
	return append(b, boolByte(r.ReadOnly))
}

// ParseConnectRequest decodes a ConnectRequest payload (without the length
// prefix). The trailing readOnly flag is optional (pre-3.4 clients omit it);
// any bytes after it are ignored. Errors wrap ErrMalformed.
func ParseConnectRequest(p []byte) (ConnectRequest, error) {
	d := decoder{b: p}
	r := ConnectRequest{
		ProtocolVersion: d.int32("protocolVersion"),
		LastZxidSeen:    d.int64("lastZxidSeen"),
		TimeoutMs:       d.int32("timeOut"),
		SessionID:       d.int64("sessionId"),
		Passwd:          d.buffer("passwd"),
	}
	r.ReadOnly = d.optBool()
	if d.err != nil {
		return ConnectRequest{}, fmt.Errorf("connect request: %w", d.err)
	}
	return r, nil
}

// EncodeConnectResponse returns the payload of a ConnectResponse frame,
// including the readOnly flag. It exists mainly for tests and fake servers.
func EncodeConnectResponse(r ConnectResponse) []byte {
	b := make([]byte, 0, connectResponseMin+len(r.Passwd)+1)
	b = binary.BigEndian.AppendUint32(b, uint32(r.ProtocolVersion))
	b = binary.BigEndian.AppendUint32(b, uint32(r.TimeoutMs))
	b = binary.BigEndian.AppendUint64(b, uint64(r.SessionID))
	b = appendBuffer(b, r.Passwd)
	return append(b, boolByte(r.ReadOnly))
}

// DecodeConnectResponse decodes a ConnectResponse payload (without the
// length prefix). The trailing readOnly flag is optional (a server omits it
// for clients that did not send one); any bytes after it are ignored, so a
// later protocol version that appends fields still parses. Errors wrap
// ErrMalformed. The returned Passwd is a copy and never aliases p.
func DecodeConnectResponse(p []byte) (ConnectResponse, error) {
	d := decoder{b: p}
	r := ConnectResponse{
		ProtocolVersion: d.int32("protocolVersion"),
		TimeoutMs:       d.int32("timeOut"),
		SessionID:       d.int64("sessionId"),
		Passwd:          d.buffer("passwd"),
	}
	r.ReadOnly = d.optBool()
	if d.err != nil {
		return ConnectResponse{}, fmt.Errorf("connect response: %w", d.err)
	}
	return r, nil
}

// ParseConnectResponse is DecodeConnectResponse reduced to the fields a
// client-side observer needs: the negotiated session timeout in
// milliseconds, the session id (0: the server refused or expired the
// session) and the session password. On error all results are zero.
func ParseConnectResponse(p []byte) (timeoutMs int32, sessionID int64, passwd []byte, err error) {
	r, err := DecodeConnectResponse(p)
	if err != nil {
		return 0, 0, nil, err
	}
	return r.TimeoutMs, r.SessionID, r.Passwd, nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// ConnectResponseHeadLen is the length of the fixed fields that start a
// ConnectResponse payload: protocolVersion, timeOut and sessionId.
const ConnectResponseHeadLen = 4 + 4 + 8

// ParseConnectResponseHead decodes the negotiated session timeout in
// milliseconds and the session id from the fixed fields at the start of a
// ConnectResponse payload, for an observer that keeps only the head of each
// frame (see Scanner); the password and readOnly flag that follow are not
// needed. Errors wrap ErrMalformed; on error both results are zero.
func ParseConnectResponseHead(p []byte) (timeoutMs int32, sessionID int64, err error) {
	if len(p) < ConnectResponseHeadLen {
		return 0, 0, fmt.Errorf("%w: connect response head needs %d bytes, have %d", ErrMalformed, ConnectResponseHeadLen, len(p))
	}
	return int32(binary.BigEndian.Uint32(p[4:])), int64(binary.BigEndian.Uint64(p[8:])), nil
}
