// Package wire reads and writes the few parts of the ZooKeeper client
// protocol that zklock's test harness and session layer need to see: the
// length-prefixed frame, the ConnectRequest / ConnectResponse handshake, and
// the request and reply headers that start every later frame.
//
// The package has no dependencies beyond the standard library and never
// panics on malformed input: every parser checks lengths and returns an
// error wrapping [ErrMalformed] instead.
//
// Framing (all integers big-endian, jute encoding):
//
//	frame            = length:int32 payload[length]
//	ConnectRequest   = protocolVersion:int32 lastZxidSeen:int64 timeOut:int32
//	                   sessionId:int64 passwd:buffer [readOnly:bool]
//	ConnectResponse  = protocolVersion:int32 timeOut:int32 sessionId:int64
//	                   passwd:buffer [readOnly:bool]
//	RequestHeader    = xid:int32 type:int32
//	ReplyHeader      = xid:int32 zxid:int64 err:int32
//	buffer           = len:int32 bytes[len]   (len -1 means null)
//
// On a client connection the first frame in each direction is the
// handshake; every later client frame starts with a RequestHeader and every
// later server frame with a ReplyHeader.
//
// A whole frame is read with ReadFrame. An observer that sees a connection's
// bytes in arbitrary chunks (a net.Conn wrapper) frames them with a Scanner,
// which yields the head of each frame (enough for the headers above, or for
// the ConnectResponse's timeout and session id: ParseConnectResponseHead)
// and skips the bodies without buffering them. ParsePathRequest reads the
// path (and watch flag) that follow the header of the requests that start
// with one: the creates, exists, getData, getChildren and getChildren2.
package wire
