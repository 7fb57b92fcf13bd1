package zklock

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
)

// A hold's token is the zxid of its create's reply, whichever create opcode
// made the node, matched by xid; a failed create gives none, nor does a
// create nobody expects.
func TestTokenIsTheCreateReplyZxid(t *testing.T) {
	const a, b = "/l/_c_a-lock-", "/l/_c_b-lock-"
	for _, op := range []int32{wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL} {
		r := newTapRig()
		r.write(t, connectRequest())
		r.read(t, connectResponse(4000, 1), 100)
		wa, wb := r.s.creates.expect(a), r.s.creates.expect(b)
		r.write(t, createRequest(7, op, a))
		select {
		case <-wa:
		default:
			t.Fatalf("op %d: the create of a was written, but its channel is open", op)
		}
		r.write(t, createRequest(8, op, b))
		r.write(t, createRequest(9, op, "/l/_c_c-lock-")) // not expected
		<-wb
		r.read(t, reply(8, 0x100000011, errNodeExists, 0), 5)
		r.read(t, reply(9, 0x100000012, 0, 20), 5)
		r.read(t, reply(7, 0x100000013, 0, 20), 5) // matched by xid, not by order
		z, ok := r.s.creates.zxid(a)
		require.True(t, ok, "op %d", op)
		require.Equal(t, int64(0x100000013), z, "op %d", op)
		_, ok = r.s.creates.zxid(b)
		require.False(t, ok, "op %d: a failed create has no czxid", op)
		_, ok = r.s.creates.zxid("/l/_c_c-lock-")
		require.False(t, ok, "op %d", op)
		r.s.creates.done(a)
		r.s.creates.done(b)
		require.Empty(t, r.s.creates.want)
		require.Empty(t, r.s.creates.xids)
		require.Empty(t, r.s.creates.zxids)
		require.Empty(t, r.s.creates.written)
	}
}

// A create retried under the same name (after its parent was made) keeps
// the token of the attempt that succeeded; forgetting one of two
// registrations keeps the other's.
func TestTokenOfRetriedCreate(t *testing.T) {
	const a = "/l/_c_a-lock-"
	r := newTapRig()
	r.write(t, connectRequest())
	r.read(t, connectResponse(4000, 1), 100)
	r.s.creates.expect(a)
	r.write(t, createRequest(1, wire.OpCreate, a))
	r.read(t, reply(1, 0x10, errNoNode, 0), 100)
	_, ok := r.s.creates.zxid(a)
	require.False(t, ok)
	r.s.creates.expect(a) // a second registration of the same name
	r.write(t, createRequest(2, wire.OpCreate, a))
	r.read(t, reply(2, 0x12, 0, 20), 100)
	r.s.creates.done(a)
	z, ok := r.s.creates.zxid(a)
	require.True(t, ok)
	require.Equal(t, int64(0x12), z)
	r.s.creates.done(a)
	_, ok = r.s.creates.zxid(a)
	require.False(t, ok)
}

// Without the tap's reply (a stream that does not parse), no token is
// known: the engine reads it with Exists.
func TestTokenUnknownWhenTheStreamDoesNotParse(t *testing.T) {
	const a = "/l/_c_a-lock-"
	r := newTapRig()
	r.write(t, connectRequest())
	r.read(t, connectResponse(4000, 1), 100)
	r.s.creates.expect(a)
	r.write(t, createRequest(1, wire.OpCreate, a))
	r.read(t, []byte{0x80, 0, 0, 0}, 100)
	r.read(t, reply(1, 0x10, 0, 20), 100)
	_, ok := r.s.creates.zxid(a)
	require.False(t, ok)
	r.s.creates.done(a)
}

// The tracker closes a create's written channel when the tap sees that
// create's request, and only then.
func TestCreateTrackerWritten(t *testing.T) {
	var tr createTracker
	a := tr.expect("/l/_c_a-lock-")
	b := tr.expect("/l/_c_b-lock-")
	tr.sent(7, "/l/_c_a-lock-", 1)
	tr.sent(8, "/l/_c_other-lock-", 1) // not expected
	select {
	case <-a:
	default:
		t.Fatal("the create of a was written, but its channel is open")
	}
	select {
	case <-b:
		t.Fatal("the create of b was not written, but its channel is closed")
	default:
	}
	tr.done("/l/_c_a-lock-")
	tr.done("/l/_c_b-lock-")
	require.Empty(t, tr.written)
	again := tr.expect("/l/_c_a-lock-") // a retry gets a fresh channel
	select {
	case <-again:
		t.Fatal("a retried create shares the closed channel of the first attempt")
	default:
	}
	tr.done("/l/_c_a-lock-")
}

// zxid returns the zxid of the last successful reply to a create of path.
func (t *createTracker) zxid(path string) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	z, ok := t.zxids[path]
	return z, ok
}
