package zktest

import (
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// quorumPacket serializes a QuorumPacket without data or auth info.
func quorumPacket(typ int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(typ))
	b = binary.BigEndian.AppendUint64(b, 0)                  // zxid
	b = binary.BigEndian.AppendUint32(b, uint32(0xffffffff)) // data: null
	return binary.BigEndian.AppendUint32(b, 0)               // no auth info
}

// The relay counts each sync of a follower's stream and marks one that
// carries a snapshot as unheld, which SetLag then reports.
func TestRelayCountsSyncsAndSnapshots(t *testing.T) {
	r := &quorumRelays{lag: make([]atomic.Int64, 2), events: make([]atomic.Int64, 2), unheld: make([]atomic.Bool, 2)}
	lb := &localBackend{relays: r}
	leader, ld := net.Pipe()
	f, follower := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.fromLeader(ld, f, 1)
	}()
	go func() { _, _ = io.Copy(io.Discard, follower) }()
	t.Cleanup(func() { leader.Close(); follower.Close(); <-done })

	_, err := leader.Write(quorumPacket(qpUpToDate))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.events[1].Load() == 1 }, 5*time.Second, time.Millisecond)
	require.False(t, r.unheld[1].Load())
	require.NoError(t, lb.lag(1, time.Second), "a parsed stream in sync can be held")

	_, err = leader.Write(quorumPacket(qpSnap))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return r.events[1].Load() == 2 }, 5*time.Second, time.Millisecond)
	require.ErrorContains(t, lb.lag(1, time.Second), "synced from a snapshot")
	require.NoError(t, lb.lag(1, 0), "ending a lag is always possible")
	require.Zero(t, r.events[0].Load(), "the other follower's stream is its own")
}
