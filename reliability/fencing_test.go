package reliability

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// setHistory: w1/1/1 acquires and writes element #1 (acknowledged), w1/1/2
// acquires and writes #1 (rejected); the register logs both and reports its
// final set. edit breaks one thing.
func setHistory(edit func(h *hist, final *[]string)) []Event {
	h := &hist{}
	h.acq("w1", 1, 1, 2, 10, 100)
	h.acq("w1", 2, 11, 12, 20, 90)
	h.add(3, Event{Kind: KindReg, Lock: "lock-0", Token: 100, Elem: "w1/1/1#1", OK: true})
	h.add(4, Event{Kind: KindWrite, Worker: "w1", Client: 1, Op: 1, Token: 100, Elem: "w1/1/1#1", OK: true})
	h.add(13, Event{Kind: KindReg, Lock: "lock-0", Token: 90, Elem: "w1/1/2#1", Max: 100})
	h.add(14, Event{Kind: KindWrite, Worker: "w1", Client: 1, Op: 2, Token: 90, Elem: "w1/1/2#1"})
	final := []string{"w1/1/1#1"}
	if edit != nil {
		edit(h, &final)
	}
	h.add(30, Event{Kind: KindRegSet, Lock: "lock-0", Set: final})
	return *h
}

func TestC2SetFullRejects(t *testing.T) {
	require.Empty(t, CheckSetFull(Analyze(setHistory(nil))))
	for name, edit := range map[string]func(h *hist, final *[]string){
		"lost acknowledged write": func(h *hist, final *[]string) { *final = nil },
		"phantom element":         func(h *hist, final *[]string) { *final = append(*final, "w9/1/1#1") },
		"rejected write in set":   func(h *hist, final *[]string) { *final = append(*final, "w1/1/2#1") },
		"duplicate element":       func(h *hist, final *[]string) { *final = append(*final, "w1/1/1#1") },
		"acknowledged, never accepted": func(h *hist, final *[]string) {
			h.add(15, Event{Kind: KindWrite, Worker: "w1", Client: 1, Op: 2, Token: 90, Elem: "w1/1/2#2", OK: true})
		},
	} {
		t.Run(name, func(t *testing.T) { only(t, CheckSetFull(Analyze(setHistory(edit))), "C2") })
	}
	// A register that never reported its final set.
	h := &hist{}
	h.add(3, Event{Kind: KindReg, Lock: "lock-0", Token: 100, Elem: "w1/1/1#1", OK: true})
	only(t, CheckSetFull(Analyze(*h)), "C2")
}

// zkw adds a guarded write sent at t0 and answered at t.
func (h *hist) zkw(op, t0, t, tok int64, ok, amb bool, ver int32) *hist {
	h.add(t0, Event{Kind: KindZKInvoke, Worker: "w1", Client: int(op), Op: op, Token: tok})
	e := Event{Kind: KindZKWrite, Worker: "w1", Client: int(op), Op: op, Token: tok, OK: ok, Amb: amb, Ver: ver}
	e.T0 = t0 * 1e6
	return h.add(t, e)
}

func finalRead(ver int32, data string) *FinalState {
	return &FinalState{Registers: map[string]RegisterRead{L: {T0: 100e6, T: 101e6, Ver: ver, Data: data}}}
}

// An illegal register history names the window of the first write no
// linearizable prefix could take: here the write that skipped a version.
func TestC2ZKRegisterNamesTheWindow(t *testing.T) {
	h := &hist{}
	h.zkw(1, 1, 2, 10, true, false, 1).zkw(2, 3, 4, 20, true, false, 2).zkw(3, 5, 6, 30, true, false, 4).zkw(4, 7, 8, 40, true, false, 5)
	v := CheckZKRegister(Analyze(*h), nil, 0)
	only(t, v, "C2")
	require.Equal(t, [2]int64{5e6, 6e6}, [2]int64{v[0].From, v[0].To})
}

func TestC2ZKRegisterLinearizable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(h *hist)
		final *FinalState
		bad   bool
	}{
		{"in order", func(h *hist) { h.zkw(1, 1, 2, 10, true, false, 1).zkw(2, 3, 4, 20, true, false, 2) }, finalRead(2, "20"), false},
		{"concurrent, either order", func(h *hist) { h.zkw(1, 1, 5, 10, true, false, 2).zkw(2, 2, 4, 10, true, false, 1) }, finalRead(2, "10"), false},
		{"refused write changes nothing", func(h *hist) { h.zkw(1, 1, 2, 10, true, false, 1).zkw(2, 3, 4, 5, false, false, 0) }, finalRead(1, "10"), false},
		{"unknown outcome applied", func(h *hist) { h.zkw(1, 1, 2, 10, false, true, 0).zkw(2, 3, 4, 20, true, false, 2) }, finalRead(2, "20"), false},
		{"unknown outcome not applied", func(h *hist) { h.zkw(1, 1, 2, 10, false, true, 0).zkw(2, 3, 4, 20, true, false, 1) }, finalRead(1, "20"), false},
		{"sent, never answered, applied", func(h *hist) {
			h.add(1, Event{Kind: KindZKInvoke, Worker: "w2", Client: 1, Op: 1, Token: 30})
		}, finalRead(1, "30"), false},
		{"version skipped", func(h *hist) { h.zkw(1, 1, 2, 10, true, false, 1).zkw(2, 3, 4, 20, true, false, 3) }, finalRead(3, "20"), true},
		{"order against real time", func(h *hist) { h.zkw(1, 1, 2, 10, true, false, 2).zkw(2, 3, 4, 20, true, false, 1) }, finalRead(2, "10"), true},
		{"stale token accepted", func(h *hist) { h.zkw(1, 1, 2, 20, true, false, 1).zkw(2, 3, 4, 10, true, false, 2) }, finalRead(2, "10"), true},
		{"final read disagrees", func(h *hist) { h.zkw(1, 1, 2, 10, true, false, 1) }, finalRead(1, "11"), true},
		{"lost write", func(h *hist) { h.zkw(1, 1, 2, 10, true, false, 1) }, finalRead(0, "0"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hist{}
			tc.build(h)
			v := CheckZKRegister(Analyze(*h), tc.final, 0)
			if tc.bad {
				only(t, v, "C2")
				require.NotZero(t, v[0].To, "the failure names a window: %+v", v[0])
			} else {
				require.Empty(t, v)
			}
		})
	}
}
