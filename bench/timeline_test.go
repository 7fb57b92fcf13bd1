package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/internal/wire"
)

// frames builds a timeline; times are in milliseconds.
type frames []frame

func at(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func (fs frames) req(ms float64, conn int, xid, op int32, path string) frames {
	return append(fs, frame{t: at(ms), conn: conn, member: "m", toServer: true, op: op, xid: xid, path: path})
}

func (fs frames) rep(ms float64, conn int, xid, op int32, path string) frames {
	return append(fs, frame{t: at(ms), conn: conn, member: "m", op: op, xid: xid, path: path})
}

func (fs frames) notif(ms float64, conn int, path string) frames {
	return append(fs, frame{t: at(ms), conn: conn, member: "m", xid: wire.XidWatchEvent, path: path})
}

// TestCensusHandoff: a waiter woken by its predecessor's delete lists,
// holds, arms a watch on its own node without waiting, and releases.
func TestCensusHandoff(t *testing.T) {
	var fs frames
	fs = fs.req(0, 0, 1, wire.OpCreate, "/l/n-1").rep(1, 0, 1, wire.OpCreate, "/l/n-1")
	fs = fs.req(0.5, 1, 1, wire.OpCreate, "/l/n-2").rep(1.5, 1, 1, wire.OpCreate, "/l/n-2")
	fs = fs.req(1.5, 1, 2, wire.OpGetChildren2, "/l").rep(2.5, 1, 2, wire.OpGetChildren2, "/l")
	fs = fs.req(2.5, 1, 3, wire.OpExists, "/l/n-1").rep(2.8, 1, 3, wire.OpExists, "/l/n-1")
	fs = fs.req(3.0, 0, 2, wire.OpDelete, "/l/n-1").rep(3.4, 0, 2, wire.OpDelete, "/l/n-1")
	fs = fs.notif(3.5, 1, "/l/n-1")
	fs = fs.req(3.6, 1, 4, wire.OpGetChildren2, "/l").rep(4.0, 1, 4, wire.OpGetChildren2, "/l")
	fs = fs.req(4.1, 1, 5, wire.OpGetData, "/l/n-2")
	fs = fs.req(4.2, 1, 6, wire.OpDelete, "/l/n-2")
	fs = fs.rep(4.6, 1, 5, wire.OpGetData, "/l/n-2").rep(4.9, 1, 6, wire.OpDelete, "/l/n-2")
	fs = fs.notif(5.0, 1, "/l/n-2") // its own node's watch fires on its own delete: no wake-up
	d := analyseCensus(fs, 2, true)
	require.InDelta(t, 2.0, d.Reads, 1e-9) // 4 reads over 2 handoffs
	require.InDelta(t, 2.0, d.Writes, 1e-9)
	require.Equal(t, [2]float64{2.0, 2.0}, d.ByMember["m"])
	p := d.Path
	require.Equal(t, 1, p.Windows) // the first holder never waited
	require.Equal(t, 1.0, p.Waited)
	require.Equal(t, 1.0, p.Stages)
	require.Equal(t, 1.0, p.OffPath)
	require.Equal(t, map[string]float64{"getChildren2": 1}, p.WaitedOps)
	require.Equal(t, map[string]float64{"getData": 1}, p.OffPathOps)
	require.InDelta(t, 0.7, p.WakeToHoldMs, 1e-6)
	require.InDelta(t, 0.5, p.DeleteToWakeMs, 1e-6)
	require.InDelta(t, 0.55, p.ReleaseMs, 1e-6) // the median of 0.4 and 0.7
}

// TestCensusCycle: an uncontended cycle with the listing pipelined behind
// the create takes one stage before the release.
func TestCensusCycle(t *testing.T) {
	var fs frames
	fs = fs.req(0, 0, 1, wire.OpCreate2, "/l/n-")
	fs = fs.req(0.1, 0, 2, wire.OpGetChildren2, "/l")
	fs = fs.rep(1.0, 0, 1, wire.OpCreate2, "/l/n-1").rep(1.1, 0, 2, wire.OpGetChildren2, "/l")
	fs = fs.req(1.2, 0, 3, wire.OpGetData, "/l/n-1")
	fs = fs.req(1.3, 0, 4, wire.OpDelete, "/l/n-1")
	fs = fs.rep(1.8, 0, 3, wire.OpGetData, "/l/n-1").rep(2.0, 0, 4, wire.OpDelete, "/l/n-1")
	p := analyseCensus(fs, 1, false).Path
	require.Equal(t, 1, p.Windows)
	require.Equal(t, 2.0, p.Waited)
	require.Equal(t, 1.0, p.Stages)
	require.Equal(t, map[string]float64{"getData": 1}, p.OffPathOps)
	require.InDelta(t, 0.7, p.ReleaseMs, 1e-6)
}

func TestStages(t *testing.T) {
	s := func(t0, t1 float64) sent { return sent{t: at(t0), reply: at(t1)} }
	require.Equal(t, 0, stages(nil))
	require.Equal(t, 1, stages([]sent{s(0, 1), s(0.1, 1.1)}))
	require.Equal(t, 3, stages([]sent{s(2, 3), s(0, 1), s(1, 2), s(0.5, 2.5)}))
}
