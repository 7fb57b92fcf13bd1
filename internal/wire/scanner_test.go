package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// scanned is what a Scanner yields for one frame, copied out of the
// callback.
type scanned struct {
	handshake bool
	length    int
	head      string
}

// scanAll feeds stream to s in chunks of the given sizes (cycled; a size
// of 0 feeds an empty chunk, up to 100 times, then counts as 1) and returns
// the frames and the first error.
func scanAll(s *Scanner, stream []byte, sizes ...int) ([]scanned, error) {
	var got []scanned
	yield := func(f Frame) { got = append(got, scanned{f.Handshake, f.Len, string(f.Head)}) }
	if len(sizes) == 0 {
		sizes = []int{len(stream)}
	}
	var err error
	empty := 0
	for i, k := 0, 0; i < len(stream); k++ {
		n := min(sizes[k%len(sizes)], len(stream)-i)
		if n == 0 {
			if empty++; empty > 100 {
				n = 1
			}
		}
		if e := s.Feed(stream[i:i+n], yield); e != nil && err == nil {
			err = e
		}
		i += n
	}
	return got, err
}

func replyFrame(xid int32, zxid int64, errc int32, body int) []byte {
	p := AppendReplyHeader(nil, ReplyHeader{Xid: xid, Zxid: zxid, Err: errc})
	return AppendFrame(nil, append(p, bytes.Repeat([]byte{0xab}, body)...))
}

func replyHead(xid int32, zxid int64, errc int32) string {
	return string(AppendReplyHeader(nil, ReplyHeader{Xid: xid, Zxid: zxid, Err: errc}))
}

// serverStream is a server's stream: the ConnectResponse, then replies and
// notifications, one of them with a body of large bytes.
func serverStream(large int) ([]byte, []scanned) {
	connect := EncodeConnectResponse(ConnectResponse{TimeoutMs: 4000, SessionID: 0x1234, Passwd: make([]byte, 16)})
	stream := AppendFrame(nil, connect)
	want := []scanned{{true, len(connect), string(connect[:ReplyHeaderLen])}}
	for _, r := range []struct {
		xid  int32
		zxid int64
		errc int32
		body int
	}{
		{1, 100, 0, 40},    // a create's reply
		{-2, 0, 0, 0},      // a ping's reply
		{-1, 0, 0, 300},    // a notification
		{2, 101, -110, 0},  // NodeExists
		{3, 102, 0, large}, // a large reply
		{4, 103, 0, 1},
	} {
		stream = append(stream, replyFrame(r.xid, r.zxid, r.errc, r.body)...)
		want = append(want, scanned{false, ReplyHeaderLen + r.body, replyHead(r.xid, r.zxid, r.errc)})
	}
	stream = append(stream, AppendFrame(nil, []byte("short"))...) // shorter than a header
	stream = append(stream, AppendFrame(nil, nil)...)             // empty
	want = append(want, scanned{false, 5, "short"}, scanned{false, 0, ""})
	return stream, want
}

// The frames do not depend on how the stream is cut into chunks.
func TestScannerAnyFragmentation(t *testing.T) {
	stream, want := serverStream(100000)
	for _, sizes := range [][]int{nil, {1}, {2}, {3}, {4}, {5}, {7}, {16}, {17}, {20}, {1000}, {0, 1}, {3, 0, 50, 1}} {
		t.Run(fmt.Sprint(sizes), func(t *testing.T) {
			s := &Scanner{Handshake: true}
			got, err := scanAll(s, stream, sizes...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			if s.Frames() != int64(len(want)) || s.Err() != nil {
				t.Fatalf("Frames() = %d, Err() = %v", s.Frames(), s.Err())
			}
		})
	}
}

// A frame is yielded once its head is in, before its body arrives.
func TestScannerYieldsAtHead(t *testing.T) {
	stream := replyFrame(7, 9, 0, 1000)
	var s Scanner
	got, err := scanAll(&s, stream[:4+ReplyHeaderLen-1])
	if err != nil || len(got) != 0 {
		t.Fatalf("before the head is complete: %+v, %v", got, err)
	}
	got, err = scanAll(&s, stream[4+ReplyHeaderLen-1:4+ReplyHeaderLen])
	if err != nil || len(got) != 1 || got[0].head != replyHead(7, 9, 0) || got[0].length != ReplyHeaderLen+1000 {
		t.Fatalf("at the head: %+v, %v", got, err)
	}
	got, err = scanAll(&s, append(stream[4+ReplyHeaderLen:], replyFrame(8, 10, 0, 0)...))
	if err != nil || len(got) != 1 || got[0].head != replyHead(8, 10, 0) {
		t.Fatalf("after the body: %+v, %v", got, err)
	}
}

func TestScannerOptions(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 40) // 400 bytes, more than MaxHead
	stream := append(AppendFrame(nil, payload), AppendFrame(nil, payload[:3])...)
	longer := func(head []byte) int { return 50 }
	tests := []struct {
		name      string
		s         Scanner
		head      int
		handshake bool
	}{
		{"zero value", Scanner{}, ReplyHeaderLen, false},
		{"head 4", Scanner{Head: 4}, 4, false},
		{"head above MaxHead", Scanner{Head: 1000}, MaxHead, false},
		{"negative head", Scanner{Head: -1}, ReplyHeaderLen, false},
		{"handshake", Scanner{Handshake: true, Head: 40}, 40, true},
		{"longer", Scanner{Longer: longer}, 50, false},
		{"longer, not for the handshake", Scanner{Handshake: true, Longer: longer}, ReplyHeaderLen, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scanAll(&tc.s, stream, 9)
			want := []scanned{{tc.handshake, len(payload), string(payload[:tc.head])}, {false, 3, "012"}}
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

func TestScannerMalformed(t *testing.T) {
	good := replyFrame(1, 2, 0, 3)
	tests := []struct {
		name   string
		max    int
		stream []byte
		frames int
	}{
		{"negative length", 0, []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3}, 0},
		{"most negative length", 0, []byte{0x80, 0, 0, 0}, 0},
		{"over the default limit", 0, binary.BigEndian.AppendUint32(nil, DefaultMaxFrame+1), 0},
		{"over a set limit", 18, good, 0},
		{"after a good frame", 0, append(append([]byte{}, good...), 0xff, 0xff, 0xff, 0xfe), 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1, 3, len(tc.stream)} {
				s := Scanner{Max: tc.max}
				got, err := scanAll(&s, tc.stream, size)
				if !errors.Is(err, ErrMalformed) || len(got) != tc.frames {
					t.Fatalf("chunks of %d: %d frames, err %v", size, len(got), err)
				}
				// Broken for good: nothing more is yielded.
				if err2 := s.Feed(good, func(Frame) { t.Fatal("frame after the error") }); err2 != err || s.Err() != err {
					t.Fatalf("later Feed returned %v, Err %v; want %v", err2, s.Err(), err)
				}
			}
		})
	}
	var s Scanner // exactly at the limit is fine
	if got, err := scanAll(&Scanner{Max: 19}, replyFrame(1, 2, 0, 3)); err != nil || len(got) != 1 {
		t.Fatalf("frame at the limit: %+v, %v", got, err)
	}
	if err := s.Feed(nil, nil); err != nil {
		t.Fatalf("empty feed: %v", err)
	}
}

// FuzzScanner: the frames a stream yields, and whether it is found
// malformed, do not depend on how it is cut into chunks; the Scanner
// never panics and its errors wrap ErrMalformed.
func FuzzScanner(f *testing.F) {
	stream, _ := serverStream(1000)
	f.Add(stream, []byte{1, 2, 3}, true, uint16(0), uint8(0))
	f.Add(stream, []byte{17}, true, uint16(200), uint8(16))
	f.Add(replyFrame(1, 2, 3, 4), []byte{0}, false, uint16(10), uint8(64))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2}, []byte{2}, false, uint16(0), uint8(4))
	f.Fuzz(func(t *testing.T, stream, cuts []byte, handshake bool, max uint16, head uint8) {
		mk := func() *Scanner {
			sc := &Scanner{Max: int(max), Head: int(head), Handshake: handshake}
			if head%2 == 1 { // an odd head also asks for a longer one, which the head's first byte sizes
				sc.Longer = func(h []byte) int { return int(h[0]) * 2 }
			}
			return sc
		}
		whole, werr := scanAll(mk(), stream)
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c)
		}
		split, serr := scanAll(mk(), stream, sizes...)
		if werr != nil && !errors.Is(werr, ErrMalformed) {
			t.Fatalf("error %v does not wrap ErrMalformed", werr)
		}
		if (werr == nil) != (serr == nil) || !slices.Equal(whole, split) {
			t.Fatalf("whole: %+v, %v\nsplit %v: %+v, %v", whole, werr, sizes, split, serr)
		}
		for i, fr := range whole {
			if fr.handshake != (handshake && i == 0) || fr.length < len(fr.head) || len(fr.head) > MaxHead {
				t.Fatalf("frame %d: %+v", i, fr)
			}
		}
	})
}
