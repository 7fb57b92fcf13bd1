package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseConnectResponse(t *testing.T) {
	pw := "000102030405060708090a0b0c0d0e0f"
	tests := []struct {
		name    string
		payload string
		timeout int32
		sid     int64
		passwd  string // hex; "nil" for a null buffer
		wantErr bool
	}{
		{"with readOnly", "00000000 00000fa0 01000009295a0000 00000010" + pw + "00", 4000, 0x01000009295a0000, pw, false},
		{"without readOnly", "00000000 00000fa0 01000009295a0000 00000010" + pw, 4000, 0x01000009295a0000, pw, false},
		{"trailing bytes ignored", "00000000 000000c8 0000000000000007 00000001 aa 01 ffff", 200, 7, "aa", false},
		{"expired session", "00000000 00000000 0000000000000000 00000010" + pw + "00", 0, 0, pw, false},
		{"empty password", "00000000 00000064 0000000000000001 00000000", 100, 1, "", false},
		{"null password", "00000000 00000064 0000000000000001 ffffffff", 100, 1, "nil", false},
		{"negative session id", "00000000 00000064 ffffffffffffffff 00000000", 100, -1, "", false},
		{"empty", "", 0, 0, "", true},
		{"short fixed part", "00000000 00000fa0 0100", 0, 0, "", true},
		{"missing password length", "00000000 00000fa0 01000009295a0000", 0, 0, "", true},
		{"password too short", "00000000 00000fa0 01000009295a0000 00000010 0001", 0, 0, "", true},
		{"negative password length", "00000000 00000fa0 01000009295a0000 fffffffe", 0, 0, "", true},
		{"huge password length", "00000000 00000fa0 01000009295a0000 7fffffff 00", 0, 0, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout, sid, passwd, err := ParseConnectResponse(unhex(t, tc.payload))
			if tc.wantErr {
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("err = %v, want ErrMalformed", err)
				}
				if timeout != 0 || sid != 0 || passwd != nil {
					t.Fatalf("results not zero on error: %d %d %x", timeout, sid, passwd)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if timeout != tc.timeout || sid != tc.sid {
				t.Fatalf("got timeout=%d sid=%#x, want %d %#x", timeout, sid, tc.timeout, tc.sid)
			}
			if tc.passwd == "nil" {
				if passwd != nil {
					t.Fatalf("passwd = %x, want nil", passwd)
				}
			} else if !bytes.Equal(passwd, unhex(t, tc.passwd)) || passwd == nil {
				t.Fatalf("passwd = %x, want %s", passwd, tc.passwd)
			}
		})
	}
}

func TestParseConnectResponseDoesNotAlias(t *testing.T) {
	p := EncodeConnectResponse(ConnectResponse{TimeoutMs: 1, SessionID: 2, Passwd: []byte{1, 2, 3}})
	_, _, passwd, err := ParseConnectResponse(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		p[i] = 0xff
	}
	if !bytes.Equal(passwd, []byte{1, 2, 3}) {
		t.Fatalf("passwd changed with the input: %x", passwd)
	}
}

func TestConnectRoundTrip(t *testing.T) {
	reqs := []ConnectRequest{
		{},
		{ProtocolVersion: 0, LastZxidSeen: 0x100000005, TimeoutMs: 30000, SessionID: 0x7ff, Passwd: make([]byte, 16), ReadOnly: true},
		{LastZxidSeen: -1, TimeoutMs: -5, SessionID: -9, Passwd: []byte("x")},
	}
	for _, want := range reqs {
		got, err := ParseConnectRequest(EncodeConnectRequest(want))
		if err != nil {
			t.Fatal(err)
		}
		if got.ProtocolVersion != want.ProtocolVersion || got.LastZxidSeen != want.LastZxidSeen ||
			got.TimeoutMs != want.TimeoutMs || got.SessionID != want.SessionID ||
			!bytes.Equal(got.Passwd, want.Passwd) || (got.Passwd == nil) != (want.Passwd == nil) || got.ReadOnly != want.ReadOnly {
			t.Fatalf("round trip: got %+v, want %+v", got, want)
		}
	}
	// The layout matches the protocol byte for byte.
	got := EncodeConnectRequest(ConnectRequest{LastZxidSeen: 2, TimeoutMs: 3, SessionID: 4, Passwd: []byte{9}})
	want := unhex(t, "00000000 0000000000000002 00000003 0000000000000004 00000001 09 00")
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding = %x, want %x", got, want)
	}
	resp := ConnectResponse{TimeoutMs: 4000, SessionID: 77, Passwd: []byte("secret"), ReadOnly: true}
	back, err := DecodeConnectResponse(EncodeConnectResponse(resp))
	if err != nil || back.TimeoutMs != 4000 || back.SessionID != 77 || string(back.Passwd) != "secret" || !back.ReadOnly {
		t.Fatalf("response round trip: %+v %v", back, err)
	}
}

func TestParseConnectRequestErrors(t *testing.T) {
	for _, p := range []string{"", "00000000", "00000000 0000000000000002 00000003 0000000000000004", "00000000 0000000000000002 00000003 0000000000000004 00000005 01"} {
		if _, err := ParseConnectRequest(unhex(t, p)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseConnectRequest(%s) err = %v, want ErrMalformed", p, err)
		}
	}
}

func TestHeaders(t *testing.T) {
	p := AppendRequestHeader(nil, RequestHeader{Xid: 7, Type: OpCloseSession})
	if !bytes.Equal(p, unhex(t, "00000007 fffffff5")) {
		t.Fatalf("request header = %x", p)
	}
	h, err := ParseRequestHeader(append(p, 1, 2, 3))
	if err != nil || h != (RequestHeader{7, OpCloseSession}) {
		t.Fatalf("ParseRequestHeader = %+v, %v", h, err)
	}
	r := ReplyHeader{Xid: -1, Zxid: 0x100000003, Err: -101}
	rp := AppendReplyHeader(nil, r)
	if !bytes.Equal(rp, unhex(t, "ffffffff 0000000100000003 ffffff9b")) {
		t.Fatalf("reply header = %x", rp)
	}
	got, err := ParseReplyHeader(rp)
	if err != nil || got != r {
		t.Fatalf("ParseReplyHeader = %+v, %v", got, err)
	}
	if _, err := ParseRequestHeader(p[:7]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short request header err = %v", err)
	}
	if _, err := ParseReplyHeader(rp[:15]); !errors.Is(err, ErrMalformed) {
		t.Fatalf("short reply header err = %v", err)
	}
}

func TestIsCreate(t *testing.T) {
	for op := int32(-20); op < 120; op++ {
		want := op == 1 || op == 15 || op == 19 || op == 21
		if IsCreate(op) != want {
			t.Errorf("IsCreate(%d) = %v", op, !want)
		}
	}
}

func TestReadFrame(t *testing.T) {
	stream := AppendFrame(AppendFrame(nil, []byte("hello")), nil)
	r := bytes.NewReader(stream)
	p, err := ReadFrame(r, 10)
	if err != nil || string(p) != "hello" {
		t.Fatalf("first frame = %q, %v", p, err)
	}
	p, err = ReadFrame(r, 10)
	if err != nil || len(p) != 0 {
		t.Fatalf("empty frame = %q, %v", p, err)
	}
	if _, err := ReadFrame(r, 10); err != io.EOF {
		t.Fatalf("at end err = %v, want io.EOF", err)
	}
	cases := []struct {
		name string
		in   string
		want error
	}{
		{"truncated prefix", "0000", io.ErrUnexpectedEOF},
		{"truncated payload", "00000005 6865", io.ErrUnexpectedEOF},
		{"prefix only", "00000005", io.ErrUnexpectedEOF},
		{"too large", "0000000b 00", ErrMalformed},
		{"negative", "ffffffff", ErrMalformed},
	}
	for _, tc := range cases {
		if _, err := ReadFrame(bytes.NewReader(unhex(t, tc.in)), 10); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	var buf bytes.Buffer
	if err := WriteFrame(&buf, []byte{1, 2}); err != nil || !bytes.Equal(buf.Bytes(), unhex(t, "00000002 0102")) {
		t.Fatalf("WriteFrame wrote %x, %v", buf.Bytes(), err)
	}
}

func TestFrameLength(t *testing.T) {
	if _, ok, err := FrameLength([]byte{0, 0, 0}, 10); ok || err != nil {
		t.Fatalf("3 bytes: ok=%v err=%v", ok, err)
	}
	if n, ok, err := FrameLength(unhex(t, "00000005 01"), 10); n != 9 || !ok || err != nil {
		t.Fatalf("n=%d ok=%v err=%v", n, ok, err)
	}
	if _, _, err := FrameLength(unhex(t, "80000000"), 10); !errors.Is(err, ErrMalformed) {
		t.Fatalf("negative length err = %v", err)
	}
}

func TestFirstFrame(t *testing.T) {
	resp := EncodeConnectResponse(ConnectResponse{TimeoutMs: 6000, SessionID: 42, Passwd: []byte("0123456789abcdef")})
	stream := append(AppendFrame(nil, resp), AppendFrame(nil, []byte("next frame"))...)
	for split := 0; split <= len(stream); split++ { // every split point
		var f FirstFrame
		var got []byte
		for _, piece := range [][]byte{stream[:split], stream[split:]} {
			p, err := f.Feed(piece)
			if err != nil {
				t.Fatal(err)
			}
			if p != nil {
				if got != nil {
					t.Fatal("first frame returned twice")
				}
				got = p
			}
		}
		timeout, sid, _, err := ParseConnectResponse(got)
		if err != nil || timeout != 6000 || sid != 42 || !f.Done() {
			t.Fatalf("split %d: got %x: %d %d %v", split, got, timeout, sid, err)
		}
	}
	var slow FirstFrame // byte by byte
	var got []byte
	for i := 0; i < len(stream) && got == nil; i++ {
		got, _ = slow.Feed(stream[i : i+1])
	}
	if !bytes.Equal(got, resp) {
		t.Fatalf("byte by byte: got %x", got)
	}
	var bad FirstFrame
	if _, err := bad.Feed([]byte{0x7f, 0, 0, 0}); !errors.Is(err, ErrMalformed) || !bad.Done() {
		t.Fatalf("oversized first frame: err=%v done=%v", err, bad.Done())
	}
	if p, err := bad.Feed([]byte{1}); p != nil || err != nil {
		t.Fatal("input after a malformed frame must be ignored")
	}
}
