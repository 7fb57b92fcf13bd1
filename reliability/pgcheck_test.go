package reliability

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// pgw adds a transaction of w1's client 1, hold op, on the PostgreSQL
// register: begun at t, ended at t+1 with outcome out ("": never logged).
func (h *hist) pgw(t, op, tok int64, elem, out string) *hist {
	base := Event{Worker: "w1", Client: 1, Op: op, Token: tok, Elem: elem}
	e := base
	e.Kind = KindPGInvoke
	h.add(t, e)
	if out != "" {
		e = base
		e.Kind, e.Out, e.OK = KindPGWrite, out, out == OutCommitted
		h.add(t+1, e)
	}
	return h
}

// pgRow adds the database's row seq of lock-0 (read after the run).
func (h *hist) pgRow(seq, tok int64, elem string) *hist {
	return h.add(100+seq, Event{Kind: KindPGRow, Lock: "lock-0", Seq: seq, Token: tok, Elem: elem})
}

// pgHistory: w1/1/1 (token 90) commits a write; w1/1/2 (token 100) commits
// one, and one whose COMMIT went unanswered but took effect; w1/1/1's late
// write is refused as stale, and one of w1/1/2's fails before COMMIT. The
// database has the three rows in that order, and the fence token 100. edit
// breaks one thing before the database is read.
func pgHistory(edit func(h *hist)) []Event {
	h := &hist{}
	h.acq("w1", 1, 1, 2, 10, 90)
	h.acq("w1", 2, 11, 12, 30, 100)
	h.pgw(3, 1, 90, "w1/1/1#1", OutCommitted)
	h.pgw(13, 2, 100, "w1/1/2#1", OutCommitted)
	h.pgw(15, 2, 100, "w1/1/2#2", OutUnknown)
	h.pgw(17, 1, 90, "w1/1/1#2", OutStale)
	h.pgw(19, 2, 100, "w1/1/2#3", OutError)
	h.pgRow(1, 90, "w1/1/1#1").pgRow(2, 100, "w1/1/2#1").pgRow(3, 100, "w1/1/2#2")
	if edit != nil {
		edit(h)
	}
	h.add(150, Event{Kind: KindPGFence, Lock: "lock-0", Token: 100})
	h.add(151, Event{Kind: KindPGRead, Seq: 3})
	return *h
}

func TestC2DatabaseAccepts(t *testing.T) {
	require.Empty(t, CheckDatabase(Analyze(pgHistory(nil))))
	// A write of unknown outcome may also not have taken effect, and one
	// whose worker never logged an outcome may be a row.
	h := &hist{}
	h.acq("w1", 1, 1, 2, 10, 90)
	h.pgw(3, 1, 90, "w1/1/1#1", OutUnknown).pgw(5, 1, 90, "w1/1/1#2", "")
	h.pgRow(1, 90, "w1/1/1#2")
	h.add(150, Event{Kind: KindPGFence, Lock: "lock-0", Token: 90})
	h.add(151, Event{Kind: KindPGRead, Seq: 1})
	require.Empty(t, CheckDatabase(Analyze(*h)))
	// No database in the history: nothing to check.
	require.Empty(t, CheckDatabase(Analyze(*good())))
	require.Equal(t, map[string]int{OutCommitted: 2, OutUnknown: 1, OutStale: 1, OutError: 1, "rows": 3},
		DatabaseOutcomes(Analyze(pgHistory(nil))))
}

func TestC2DatabaseRejects(t *testing.T) {
	for name, edit := range map[string]func(h *hist){
		// The stale holder's write committed after the greater token: what
		// a missing fence lets through (N7).
		"stale token committed": func(h *hist) {
			h.pgw(21, 1, 90, "w1/1/1#3", OutCommitted)
			h.pgRow(4, 90, "w1/1/1#3")
		},
		"committed, not a row": func(h *hist) { h.pgw(21, 2, 100, "w1/1/2#4", OutCommitted) },
		"refused, yet a row": func(h *hist) {
			h.pgRow(4, 100, "w1/1/2#3")
		},
		"phantom row":         func(h *hist) { h.pgRow(4, 100, "w9/1/1#1") },
		"row of no write":     func(h *hist) { h.pgRow(4, 100, "w1/1/2#9") },
		"duplicate row":       func(h *hist) { h.pgRow(4, 100, "w1/1/2#1") },
		"two rows at a place": func(h *hist) { h.pgRow(3, 100, "w1/1/2#5").pgw(21, 2, 100, "w1/1/2#5", OutUnknown) },
		"stale refusal without a greater token": func(h *hist) {
			h.pgw(21, 2, 100, "w1/1/2#6", OutStale)
		},
		"fence disagrees with the rows": func(h *hist) {
			h.add(140, Event{Kind: KindPGFence, Lock: "lock-1", Token: 7})
		},
	} {
		t.Run(name, func(t *testing.T) { only(t, CheckDatabase(Analyze(pgHistory(edit))), "C2") })
	}
	// Writes, but the database was never read.
	h := &hist{}
	h.acq("w1", 1, 1, 2, 10, 90).pgw(3, 1, 90, "w1/1/1#1", OutCommitted)
	only(t, CheckDatabase(Analyze(*h)), "C2")
}

// The window of an order violation covers both writes, so that the
// timeline shows the stale one and the greater one committed before it.
func TestC2DatabaseWindow(t *testing.T) {
	vs := CheckDatabase(Analyze(pgHistory(func(h *hist) {
		h.pgw(21, 1, 90, "w1/1/1#3", OutCommitted)
		h.pgRow(4, 90, "w1/1/1#3")
	})))
	require.Len(t, vs, 1, "%v", vs)
	require.Contains(t, vs[0].Detail, "token 90 (w1/1/1#3) committed at place 4 after token 100 (w1/1/2#1)")
	require.Equal(t, int64(13e6), vs[0].From)
	require.Equal(t, int64(22e6), vs[0].To)
}
