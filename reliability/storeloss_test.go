package reliability

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// zkwz adds an acknowledged guarded write with its version and zxid.
func (h *hist) zkwz(op, t0, t, tok int64, ver int32, zxid int64) *hist {
	h.add(t0, Event{Kind: KindZKInvoke, Worker: "w1", Client: int(op), Op: op, Token: tok})
	e := Event{Kind: KindZKWrite, Worker: "w1", Client: int(op), Op: op, Token: tok, OK: true, Ver: ver, Zxid: zxid}
	e.T0 = t0 * 1e6
	return h.add(t, e)
}

// ZooKeeper forgot write 2 (version 2, epoch 1) across a leader change, and
// gave version 2 again to write 3 (epoch 2). That is the store's finding,
// not C2's; the rest is judged as if write 2 might not have happened, so a
// stale token accepted after it is still C2's.
func TestC2StoreForgotAcknowledgedWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		tok3 int64
		c2   bool
	}{
		{"fencing held", 30, false},
		{"and then a stale token accepted", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hist{}
			h.zkwz(1, 1, 2, 10, 1, 0x100000001)
			h.zkwz(2, 3, 4, 20, 2, 0x100000002) // forgotten
			h.zkwz(3, 10, 11, tc.tok3, 2, 0x200000001)
			an := Analyze(*h)
			vs := append(CheckZKRegister(an, finalRead(2, strconv.FormatInt(tc.tok3, 10)), 0), CheckFencing(an)...)
			viol, total, store, examples := Tally(vs)
			require.Equal(t, 1, store, "%v", vs)
			require.Len(t, examples, len(vs))
			var found Violation
			for _, v := range vs {
				if v.Checker == StoreChecker {
					found = v
				}
			}
			require.Contains(t, found.Detail, "zxid 0x100000002")
			require.Contains(t, found.Detail, "version 2, which zxid 0x200000001")
			require.Equal(t, [2]int64{3e6, 11e6}, [2]int64{found.From, found.To})
			if tc.c2 {
				require.Positive(t, viol["C2"])
				require.Equal(t, viol["C2"], total)
			} else {
				require.Zero(t, total, "%v", vs)
			}
		})
	}
}

// Without a version given twice, nothing is the store's: a skipped version
// or a lost write without a successor is C2's, as before.
func TestC2NoStoreFindingWithoutRepeatedVersion(t *testing.T) {
	h := &hist{}
	h.zkwz(1, 1, 2, 10, 1, 0x100000001).zkwz(2, 3, 4, 20, 3, 0x100000002)
	vs := CheckZKRegister(Analyze(*h), finalRead(3, "20"), 0)
	only(t, vs, "C2")
	_, total, store, _ := Tally(vs)
	require.Equal(t, [2]int{1, 0}, [2]int{total, store})
}

// Tally counts the store's findings apart and lists violations first among
// its ten examples.
func TestTallyPutsViolationsFirst(t *testing.T) {
	var vs []Violation
	for range 12 {
		vs = append(vs, Violation{Checker: StoreChecker})
	}
	vs = append(vs, Violation{Checker: "C2"}, Violation{Checker: "C1"})
	viol, total, store, examples := Tally(vs)
	require.Equal(t, map[string]int{"C1": 1, "C2": 1}, viol)
	require.Equal(t, [2]int{2, 12}, [2]int{total, store})
	require.Len(t, examples, 10)
	require.Equal(t, []string{"C2", "C1", StoreChecker}, []string{examples[0].Checker, examples[1].Checker, examples[2].Checker})
}
