package reliability

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// eraHistory is S25 in small: w1/1/1 of era "old" (token 900) commits and
// stalls (its release is logged early, as after a loss); the
// ensemble is rebuilt; w1/1/2 of era "new" (token 5) is refused as of
// another era; the fence is rebased; w1/1/3 (token 7) commits; w1/1/1's
// late write is refused as of another era. The database has the two rows,
// and the fence token 7 of era "new". edit breaks one thing before the
// database is read.
func eraHistory(edit func(h *hist)) []Event {
	h := &hist{}
	for _, a := range []struct {
		op, start, tok int64
		era, out       string
	}{{1, 2, 900, "old", OutCommitted}, {2, 12, 5, "new", OutOtherEra}, {3, 22, 7, "new", OutCommitted}} {
		h.acq("w1", a.op, a.start-1, a.start, a.start+8, a.tok)
		(*h)[len(*h)-3].Era = a.era // the ok event
		h.pgwEra(a.start+1, a.op, a.tok, a.era, fmt.Sprintf("w1/1/%d#1", a.op), a.out)
	}
	h.pgwEra(40, 1, 900, "old", "w1/1/1#2", OutOtherEra)
	h.pgRowEra(1, 900, "old", "w1/1/1#1").pgRowEra(2, 7, "new", "w1/1/3#1")
	if edit != nil {
		edit(h)
	}
	h.add(150, Event{Kind: KindPGFence, Lock: "lock-0", Token: 7, Era: "new"})
	h.add(151, Event{Kind: KindPGRead, Seq: 2})
	return *h
}

// pgwEra is pgw with the token's ensemble era.
func (h *hist) pgwEra(t, op, tok int64, era, elem, out string) *hist {
	h.pgw(t, op, tok, elem, out)
	for i := len(*h) - 1; i >= 0; i-- {
		if (*h)[i].Kind == KindPGInvoke {
			(*h)[i].Era = era
			break
		}
	}
	return h
}

func (h *hist) pgRowEra(seq, tok int64, era, elem string) *hist {
	h.pgRow(seq, tok, elem)
	(*h)[len(*h)-1].Era = era
	return h
}

func TestC2DatabaseEras(t *testing.T) {
	require.Empty(t, CheckDatabase(Analyze(eraHistory(nil))))
	require.Empty(t, CheckTokens(Analyze(eraHistory(nil))), "C3: tokens start over in a new era")
	for name, edit := range map[string]func(h *hist){
		// What a rebase that ignores eras lets through (N8).
		"old era committed after the new": func(h *hist) {
			h.pgwEra(45, 1, 900, "old", "w1/1/1#3", OutCommitted)
			h.pgRowEra(3, 900, "old", "w1/1/1#3")
		},
		"stale within the new era": func(h *hist) {
			h.pgwEra(45, 2, 5, "new", "w1/1/2#2", OutCommitted)
			h.pgRowEra(3, 5, "new", "w1/1/2#2")
		},
		"fence in the old era": func(h *hist) {
			h.add(140, Event{Kind: KindPGFence, Lock: "lock-0", Token: 900, Era: "old"})
		},
	} {
		t.Run(name, func(t *testing.T) { only(t, CheckDatabase(Analyze(eraHistory(edit))), "C2") })
	}
	// A refusal as of another era where there is only one.
	h := &hist{}
	h.acq("w1", 1, 1, 2, 60, 900)
	(*h)[len(*h)-3].Era = "new"
	h.pgwEra(3, 1, 900, "new", "w1/1/1#1", OutCommitted).pgwEra(5, 1, 900, "new", "w1/1/1#2", OutOtherEra)
	h.pgRowEra(1, 900, "new", "w1/1/1#1")
	h.add(150, Event{Kind: KindPGFence, Lock: "lock-0", Token: 900, Era: "new"})
	h.add(151, Event{Kind: KindPGRead, Seq: 1})
	only(t, CheckDatabase(Analyze(*h)), "C2")
}
