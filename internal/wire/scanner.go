package wire

import (
	"encoding/binary"
	"fmt"
)

// MaxHead is the most bytes of each frame's payload a Scanner keeps:
// enough for a notification's ReplyHeader, WatcherEvent and a path of up
// to 292 bytes.
const MaxHead = 320

// Frame describes one frame found by a [Scanner].
type Frame struct {
	// Handshake is true for the first frame of a stream that the Scanner
	// was told starts with the handshake (the ConnectRequest or the
	// ConnectResponse); it is false for every other frame.
	Handshake bool
	// Len is the payload length announced by the frame's length prefix
	// (which does not count the prefix itself).
	Len int
	// Head holds the first min(Len, Scanner.Head) bytes of the payload.
	// It aliases the Scanner's buffer: it is valid only until the callback
	// that received it returns.
	Head []byte
}

// Scanner frames a ZooKeeper byte stream, in either direction, that is
// seen in chunks of arbitrary size, as a net.Conn wrapper sees it. For each
// frame it yields the frame's length and the first bytes of its payload
// (enough for a RequestHeader, a ReplyHeader or the fixed fields of a
// ConnectResponse) and skips the rest without buffering it, so its memory
// use does not depend on the frames' sizes.
//
// The zero value frames a stream without a handshake, keeps ReplyHeaderLen
// bytes of each payload and accepts frames up to DefaultMaxFrame. Set the
// fields before the first Feed; changing them later has undefined results.
// A Scanner is not safe for concurrent use.
type Scanner struct {
	// Max limits the payload length of a frame; 0 or less means
	// DefaultMaxFrame.
	Max int
	// Head is how many leading payload bytes of each frame are kept and
	// passed in Frame.Head: 0 or less means ReplyHeaderLen; values above MaxHead
	// mean MaxHead.
	Head int
	// Handshake says that the stream starts with the handshake frame, which
	// is then yielded with Frame.Handshake set.
	Handshake bool
	// Longer, when set, is asked once a frame's Head bytes are in (not for
	// the handshake frame) how many bytes of its head to keep instead:
	// values above Head (up to MaxHead) delay the frame's yield until that
	// many are in, so that only the frames that need more wait for it.
	Longer func(head []byte) int

	buf    [4 + MaxHead]byte // the current frame's length prefix and head
	have   int               // bytes of buf collected
	want   int               // bytes of buf wanted: 4 until the length is known
	sized  bool              // the current frame's length is known
	longer bool              // Longer was asked for the current frame
	length int               // the current frame's payload length
	skip   int               // body bytes still to skip
	frames int64             // frames yielded
	err    error
}

// Feed scans p, the next chunk of the stream, and calls yield, in stream
// order, for every frame whose head completes within p: a frame is
// yielded as soon as its head is complete, possibly before the rest of its
// body has arrived. Feed does not retain p, and yield must not call Feed.
//
// When a length prefix is negative or larger than Max, Feed returns an
// error wrapping ErrMalformed; the Scanner is then broken: frames after the
// bad prefix are never yielded and every later call returns the same error
// at once. Feed never panics, whatever the input.
func (s *Scanner) Feed(p []byte, yield func(Frame)) error {
	for len(p) > 0 && s.err == nil {
		if s.skip > 0 {
			k := min(s.skip, len(p))
			s.skip -= k
			p = p[k:]
			continue
		}
		if s.want == 0 {
			s.want = 4
		}
		k := copy(s.buf[s.have:s.want], p)
		s.have += k
		p = p[k:]
		if s.have < s.want {
			return nil
		}
		if !s.sized {
			n := int32(binary.BigEndian.Uint32(s.buf[:4]))
			if limit := s.max(); n < 0 || int64(n) > int64(limit) {
				s.err = fmt.Errorf("%w: frame %d: length %d (limit %d)", ErrMalformed, s.frames, n, limit)
				return s.err
			}
			s.sized, s.length = true, int(n)
			s.want = 4 + min(s.length, s.head())
			if s.want > 4 {
				continue
			}
		}
		handshake := s.Handshake && s.frames == 0
		if s.Longer != nil && !handshake && !s.longer && s.length > s.want-4 { // a frame wholly in hand has no more to keep
			s.longer = true
			if n := 4 + min(s.length, s.Longer(s.buf[4:s.want]), MaxHead); n > s.want {
				s.want = n
				continue
			}
		}
		f := Frame{Handshake: handshake, Len: s.length, Head: s.buf[4:s.want]}
		s.skip = s.length - (s.want - 4)
		s.have, s.want, s.sized, s.longer, s.length = 0, 0, false, false, 0
		s.frames++
		yield(f)
	}
	return s.err
}

// Err returns the error that broke the Scanner, or nil.
func (s *Scanner) Err() error { return s.err }

// Frames returns how many frames the Scanner has yielded.
func (s *Scanner) Frames() int64 { return s.frames }

func (s *Scanner) max() int {
	if s.Max <= 0 {
		return DefaultMaxFrame
	}
	return s.Max
}

func (s *Scanner) head() int {
	switch {
	case s.Head <= 0:
		return ReplyHeaderLen
	case s.Head > MaxHead:
		return MaxHead
	}
	return s.Head
}
