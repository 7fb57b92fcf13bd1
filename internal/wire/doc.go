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
package wire
