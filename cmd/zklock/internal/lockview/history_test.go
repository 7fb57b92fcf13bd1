package lockview

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The history is bounded per lock and in all, whatever the number of
// locks and events, and says from when it starts once it dropped some.
func TestHistoryBounds(t *testing.T) {
	v := &View{}
	start := time.Now()
	locks := make([]*lockState, 1000)
	for i := range locks {
		locks[i] = &lockState{from: start}
	}
	busy := &lockState{from: start}
	for i := range 3 * maxEvents {
		at := start.Add(time.Duration(i) * time.Millisecond)
		v.addLocked(locks[i%len(locks)], &Event{At: at, Kind: EventAcquired, Node: fmt.Sprint(i)})
		v.addLocked(busy, &Event{At: at, Kind: EventQueued, Node: fmt.Sprint(i)})
		require.LessOrEqual(t, v.total, maxEvents)
		require.LessOrEqual(t, len(v.events), 2*maxEvents+1)
	}
	sum := len(busy.timeline)
	for _, ls := range locks {
		require.LessOrEqual(t, len(ls.timeline), maxTimeline)
		sum += len(ls.timeline)
	}
	assert.Equal(t, v.total, sum)
	assert.Len(t, busy.timeline, maxTimeline)
	assert.True(t, busy.dropped)
	h := busy.historyLocked(busy.timeline[len(busy.timeline)-1].At, 24*time.Hour)
	assert.Equal(t, busy.from, h.From)
	assert.Contains(t, h.Since, "oldest event kept")
	assert.LessOrEqual(t, len(h.Rows), maxRows)
}

// A handoff and a loss read as rows with their waits and holds, counted
// as p50, p99 and max; the sparkline counts the acquisitions per minute.
func TestHistoryRows(t *testing.T) {
	t0 := time.Now().Truncate(time.Minute).Add(-10 * time.Minute)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	v := &View{}
	ls := &lockState{from: t0}
	for _, e := range []Event{
		{At: at(0), Kind: EventAcquired, Node: "a", ID: "first", Session: "0x1"},
		{At: at(1), Kind: EventQueued, Node: "b", ID: "second", Session: "0x2"},
		{At: at(10), Kind: EventReleased, Node: "a"},
		{At: at(10), Kind: EventAcquired, Node: "b"},
		{At: at(12), Kind: EventQueued, Node: "c"},
		{At: at(30), Kind: EventLost, Node: "b"},
		{At: at(30), Kind: EventAcquired, Node: "c"},
		{At: at(100), Kind: EventQueued, Node: "d"},
		{At: at(101), Kind: EventGaveUp, Node: "d"},
	} {
		v.addLocked(ls, &e)
	}
	h := ls.historyLocked(at(200), 30*time.Minute)
	require.Len(t, h.Rows, 4)
	assert.Equal(t, []string{"a", "b", "c", "d"}, []string{h.Rows[0].Node, h.Rows[1].Node, h.Rows[2].Node, h.Rows[3].Node})
	assert.Equal(t, Span{Node: "b", ID: "second", Session: "0x2", Queued: at(1), Held: at(10), End: at(30), How: EventLost}, h.Rows[1])
	assert.Equal(t, Stats{N: 2, P50: 9000, P99: 18000, Max: 18000}, h.Waits)
	assert.Equal(t, Stats{N: 2, P50: 10000, P99: 20000, Max: 20000}, h.Holds)
	assert.Equal(t, t0, h.From, "the view saw the lock after the window began")
	svg := string(timelineSVG(h))
	assert.Contains(t, svg, `class="end lost"`)
	assert.Contains(t, svg, `class="end gave-up"`)
	holds := ls.recentHolds(at(200))
	assert.Equal(t, 3, holds[len(holds)-1-3]+holds[len(holds)-1-4], "%v", holds)
	assert.Nil(t, ls.recentHolds(at(200).Add(time.Hour)), "past the sparkline's 30 minutes")
}
