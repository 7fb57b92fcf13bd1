package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrMalformed is wrapped by every error this package returns for input that
// does not follow the protocol (short, oversized or negative-length data).
var ErrMalformed = errors.New("wire: malformed ZooKeeper packet")

// DefaultMaxFrame is a frame size limit suitable for ReadFrame: ZooKeeper's
// default jute.maxbuffer is 1 MiB minus one byte, and a server may add a
// little framing around it.
const DefaultMaxFrame = 16 << 20

// ReadFrame reads one length-prefixed frame from r and returns its payload
// (without the 4-byte length). It returns io.EOF only when r ends cleanly
// before the first byte of a frame, io.ErrUnexpectedEOF when r ends inside a
// frame, and an error wrapping ErrMalformed when the length is negative or
// larger than max. It allocates a new payload slice for every frame.
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(hdr[:]))
	if n < 0 || int64(n) > int64(max) {
		return nil, fmt.Errorf("%w: frame length %d (limit %d)", ErrMalformed, n, max)
	}
	payload := make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return payload, nil
}

// AppendFrame appends the 4-byte big-endian length of payload and then
// payload to dst, and returns the extended slice.
func AppendFrame(dst, payload []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// WriteFrame writes payload to w as one frame, in a single Write call.
func WriteFrame(w io.Writer, payload []byte) error {
	_, err := w.Write(AppendFrame(make([]byte, 0, 4+len(payload)), payload))
	return err
}

// FrameLength reports the total length (prefix included) of the frame that
// starts at the beginning of b, once at least its 4-byte prefix is present.
// ok is false while fewer than 4 bytes are available; err wraps ErrMalformed
// when the announced length is negative or larger than max. It lets a caller
// that sees a byte stream in arbitrary pieces know when a frame is complete.
func FrameLength(b []byte, max int) (n int, ok bool, err error) {
	if len(b) < 4 {
		return 0, false, nil
	}
	l := int32(binary.BigEndian.Uint32(b))
	if l < 0 || int64(l) > int64(max) {
		return 0, true, fmt.Errorf("%w: frame length %d (limit %d)", ErrMalformed, l, max)
	}
	return 4 + int(l), true, nil
}

// decoder reads jute-encoded fields from a byte slice, remembering the
// first error; every accessor returns a zero value after an error.
type decoder struct {
	b   []byte
	err error
}

// take consumes the next n bytes; ok is false (and nothing is consumed)
// after an error or when fewer than n bytes are left, which is then the
// error.
func (d *decoder) take(n int, what string) (b []byte, ok bool) {
	if d.err != nil {
		return nil, false
	}
	if len(d.b) < n {
		d.err = fmt.Errorf("%w: %s needs %d bytes, %d left", ErrMalformed, what, n, len(d.b))
		return nil, false
	}
	b, d.b = d.b[:n], d.b[n:]
	return b, true
}

func (d *decoder) int32(what string) int32 {
	if b, ok := d.take(4, what); ok {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (d *decoder) int64(what string) int64 {
	if b, ok := d.take(8, what); ok {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// buffer reads a jute buffer: int32 length, then that many bytes; length -1
// is a null buffer and decodes as nil. The result is a copy.
func (d *decoder) buffer(what string) []byte {
	n := d.int32(what + " length")
	if d.err != nil || n == -1 {
		return nil
	}
	if n < 0 {
		d.err = fmt.Errorf("%w: %s length %d", ErrMalformed, what, n)
		return nil
	}
	b, ok := d.take(int(n), what)
	if !ok {
		return nil
	}
	return append([]byte{}, b...)
}

// optBool reads an optional trailing bool: false when no byte is left.
func (d *decoder) optBool() bool {
	if d.err != nil || len(d.b) == 0 {
		return false
	}
	v := d.b[0] != 0
	d.b = d.b[1:]
	return v
}

func appendBuffer(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// FirstFrame extracts the first frame of a byte stream that is seen in
// arbitrary pieces, as a net.Conn wrapper's Read sees the server's
// ConnectResponse. The zero value is ready to use; it is not safe for
// concurrent use.
type FirstFrame struct {
	// Max limits the frame length; 0 means 64 KiB, ample for a handshake.
	Max  int
	buf  []byte
	done bool
}

// Feed appends p. It returns the first frame's payload once, when the
// frame is complete; later calls return (nil, nil) and keep nothing. An
// announced length outside [0, Max] yields an error wrapping ErrMalformed
// once, and the stream is then ignored.
func (f *FirstFrame) Feed(p []byte) ([]byte, error) {
	if f.done || len(p) == 0 {
		return nil, nil
	}
	limit := f.Max
	if limit <= 0 {
		limit = 64 << 10
	}
	f.buf = append(f.buf, p...)
	n, ok, err := FrameLength(f.buf, limit)
	switch {
	case err != nil:
		f.done, f.buf = true, nil
		return nil, err
	case !ok || len(f.buf) < n:
		return nil, nil
	}
	payload := f.buf[4:n:n]
	f.done, f.buf = true, nil
	return payload, nil
}

// Done reports whether the first frame was returned (or found malformed).
func (f *FirstFrame) Done() bool { return f.done }
