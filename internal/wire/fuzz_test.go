package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func FuzzParseConnectResponse(f *testing.F) {
	f.Add(EncodeConnectResponse(ConnectResponse{TimeoutMs: 4000, SessionID: 1 << 56, Passwd: make([]byte, 16)}))
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0x0f, 0xa0, 1, 2, 3, 4, 5, 6, 7, 8, 0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0x0f, 0xa0, 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		timeout, sid, passwd, err := ParseConnectResponse(p)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if timeout != 0 || sid != 0 || passwd != nil {
				t.Fatal("non-zero results with an error")
			}
			return
		}
		// A successful parse re-encodes to a prefix-compatible payload.
		r := ConnectResponse{TimeoutMs: timeout, SessionID: sid, Passwd: passwd}
		enc := EncodeConnectResponse(r)
		if !bytes.Equal(enc[4:len(enc)-1], p[4:len(enc)-1]) {
			t.Fatalf("re-encoding %x differs from input %x", enc, p)
		}
	})
}

func FuzzParseConnectRequest(f *testing.F) {
	f.Add(EncodeConnectRequest(ConnectRequest{TimeoutMs: 4000, SessionID: 5, Passwd: []byte("pw")}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := ParseConnectRequest(p)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		back, err := ParseConnectRequest(EncodeConnectRequest(r))
		if err != nil || back.SessionID != r.SessionID || !bytes.Equal(back.Passwd, r.Passwd) {
			t.Fatalf("round trip failed: %+v -> %+v, %v", r, back, err)
		}
	})
}

func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(nil, []byte("abc")), 16)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, 16)
	f.Add([]byte{0, 0}, 0)
	f.Fuzz(func(t *testing.T, in []byte, max int) {
		if max < 0 || max > 1<<20 {
			max = 1 << 20
		}
		var ff FirstFrame
		if first, ferr := ff.Feed(in); ferr != nil && !errors.Is(ferr, ErrMalformed) || len(first) > len(in) {
			t.Fatalf("FirstFrame.Feed: %d bytes, %v", len(first), ferr)
		}
		p, err := ReadFrame(bytes.NewReader(in), max)
		n, ok, lerr := FrameLength(in, max)
		if err == nil {
			if !ok || lerr != nil || n != 4+len(p) || !bytes.Equal(in[4:n], p) {
				t.Fatalf("ReadFrame and FrameLength disagree: %d %v %v", n, ok, lerr)
			}
			return
		}
		if !errors.Is(err, ErrMalformed) && err != io.EOF && err != io.ErrUnexpectedEOF {
			t.Fatalf("unexpected error %v", err)
		}
		if _, err := ParseRequestHeader(in); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatal(err)
		}
		if _, err := ParseReplyHeader(in); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatal(err)
		}
	})
}
