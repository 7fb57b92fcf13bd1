package wire

import (
	"bytes"
	"errors"
	"testing"
)

func TestParsePathRequest(t *testing.T) {
	createBody := []byte{0, 0, 0, 1, 'd', 0, 0, 0, 0, 0, 0, 0, 3} // data, empty ACL, flags
	tests := []struct {
		name    string
		payload []byte
		want    PathRequest
		wantErr bool
	}{
		{"create", append(AppendPathRequest(nil, RequestHeader{1, OpCreate}, "/l/_c_x-lock-", false), createBody...),
			PathRequest{RequestHeader{1, OpCreate}, []byte("/l/_c_x-lock-"), false}, false},
		{"createContainer", AppendPathRequest(nil, RequestHeader{2, OpCreateContainer}, "/l", false),
			PathRequest{RequestHeader{2, OpCreateContainer}, []byte("/l"), false}, false},
		{"create2", AppendPathRequest(nil, RequestHeader{3, OpCreate2}, "/a", false),
			PathRequest{RequestHeader{3, OpCreate2}, []byte("/a"), false}, false},
		{"createTTL", AppendPathRequest(nil, RequestHeader{4, OpCreateTTL}, "/t", false),
			PathRequest{RequestHeader{4, OpCreateTTL}, []byte("/t"), false}, false},
		{"getData with a watch", AppendPathRequest(nil, RequestHeader{5, OpGetData}, "/n", true),
			PathRequest{RequestHeader{5, OpGetData}, []byte("/n"), true}, false},
		{"getData without a watch", AppendPathRequest(nil, RequestHeader{6, OpGetData}, "/n", false),
			PathRequest{RequestHeader{6, OpGetData}, []byte("/n"), false}, false},
		{"exists, any non-zero flag", append(AppendPathRequest(nil, RequestHeader{7, OpExists}, "/e", false)[:14], 2),
			PathRequest{RequestHeader{7, OpExists}, []byte("/e"), true}, false},
		{"getChildren2", AppendPathRequest(nil, RequestHeader{8, OpGetChildren2}, "/", true),
			PathRequest{RequestHeader{8, OpGetChildren2}, []byte("/"), true}, false},
		{"empty path", AppendPathRequest(nil, RequestHeader{9, OpCreate}, "", false),
			PathRequest{RequestHeader{9, OpCreate}, []byte{}, false}, false},
		{"no path decoded for delete", AppendPathRequest(nil, RequestHeader{10, OpDelete}, "/d", false),
			PathRequest{RequestHeader{10, OpDelete}, nil, false}, false},
		{"ping", AppendRequestHeader(nil, RequestHeader{XidPing, OpPing}),
			PathRequest{RequestHeader{XidPing, OpPing}, nil, false}, false},
		{"short header", []byte{0, 0, 0, 1, 0, 0, 0}, PathRequest{}, true},
		{"no path length", AppendRequestHeader(nil, RequestHeader{1, OpCreate}), PathRequest{}, true},
		{"negative path length", append(AppendRequestHeader(nil, RequestHeader{1, OpCreate}), 0xff, 0xff, 0xff, 0xff), PathRequest{}, true},
		{"path beyond the payload", append(AppendRequestHeader(nil, RequestHeader{1, OpGetData}), 0, 0, 0, 5, '/', 'a'), PathRequest{}, true},
		{"no watch flag", AppendPathRequest(nil, RequestHeader{1, OpGetData}, "/n", false)[:14], PathRequest{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePathRequest(tc.payload)
			if tc.wantErr {
				if !errors.Is(err, ErrMalformed) || got.RequestHeader != (RequestHeader{}) || got.Path != nil || got.Watch {
					t.Fatalf("got %+v, %v; want a zero result and ErrMalformed", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.RequestHeader != tc.want.RequestHeader || !bytes.Equal(got.Path, tc.want.Path) ||
				(got.Path == nil) != (tc.want.Path == nil) || got.Watch != tc.want.Watch {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func FuzzParsePathRequest(f *testing.F) {
	f.Add(AppendPathRequest(nil, RequestHeader{1, OpGetData}, "/l/_c_a-lock-0000000001", true))
	f.Add(AppendPathRequest(nil, RequestHeader{2, OpCreate}, "/l/_c_a-lock-", false))
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, p []byte) {
		r, err := ParsePathRequest(p)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if r.Path != nil && !HasPath(r.Type) || r.Watch && !HasWatch(r.Type) {
			t.Fatalf("%+v: fields for a type that has none", r)
		}
		if HasPath(r.Type) {
			back := AppendPathRequest(nil, r.RequestHeader, string(r.Path), r.Watch)
			if !bytes.Equal(back[:len(back)-btoi(HasWatch(r.Type))], p[:len(back)-btoi(HasWatch(r.Type))]) {
				t.Fatalf("re-encoding %x is not a prefix of %x", back, p)
			}
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestParseConnectResponseHead(t *testing.T) {
	p := EncodeConnectResponse(ConnectResponse{TimeoutMs: 6000, SessionID: -7, Passwd: make([]byte, 16)})
	for _, n := range []int{ConnectResponseHeadLen, len(p)} {
		ms, sid, err := ParseConnectResponseHead(p[:n])
		if err != nil || ms != 6000 || sid != -7 {
			t.Fatalf("%d bytes: %d %d %v", n, ms, sid, err)
		}
	}
	if ms, sid, err := ParseConnectResponseHead(p[:ConnectResponseHeadLen-1]); !errors.Is(err, ErrMalformed) || ms != 0 || sid != 0 {
		t.Fatalf("short: %d %d %v", ms, sid, err)
	}
}
