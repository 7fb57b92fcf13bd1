package reliability

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// C2, fencing: three independent views of the protected writes.

// CheckFencing is C2's order check: in the register's acceptance log, and in
// the order of the ZooKeeper register's accepted writes (mzxid), no accepted
// write has a token lower than one accepted before it (writes the store
// forgot, lostWrites, left out).
func CheckFencing(h *History) []Violation {
	var out []Violation
	maxReg := map[string]int64{}
	for _, e := range h.Events {
		if e.Kind != KindReg || !e.OK {
			continue
		}
		if e.Token < maxReg[e.Lock] {
			out = append(out, Violation{"C2", fmt.Sprintf("register %s accepted token %d (%s) after %d", e.Lock, e.Token, e.Elem, maxReg[e.Lock]), e.T, e.T})
		}
		maxReg[e.Lock] = max(maxReg[e.Lock], e.Token)
	}
	var zw []Event
	for _, e := range h.Events {
		if e.Kind == KindZKWrite && e.OK && !h.forgotten[keyOf(e)] { // reported by CheckZKRegister
			zw = append(zw, e)
		}
	}
	sort.SliceStable(zw, func(i, j int) bool { return zw[i].Zxid < zw[j].Zxid })
	maxZK := map[string]int64{}
	for _, e := range zw {
		if e.Token < maxZK[e.Lock] {
			out = append(out, Violation{"C2", fmt.Sprintf("zk register of %s accepted token %d (%s, zxid %#x) after %d", e.Lock, e.Token, e.HoldID(), e.Zxid, maxZK[e.Lock]), e.T0, e.T})
		}
		maxZK[e.Lock] = max(maxZK[e.Lock], e.Token)
	}
	return out
}

// CheckSetFull is C2's set check (Jepsen's set-full): each resource's final
// set, as the register reported it when it stopped, holds exactly the
// elements it accepted in its log, every write a worker was told was
// accepted is in it (nothing lost), and every element in it belongs to an
// acquisition of the history, once (nothing phantom or duplicated).
func CheckSetFull(h *History) []Violation {
	var out []Violation
	accepted := map[string]map[string]bool{} // resource -> elements accepted in the log
	final := map[string][]string{}
	hasFinal := map[string]bool{}
	for _, e := range h.Events {
		switch {
		case e.Kind == KindReg && e.OK:
			if accepted[e.Lock] == nil {
				accepted[e.Lock] = map[string]bool{}
			}
			accepted[e.Lock][e.Elem] = true
		case e.Kind == KindRegSet:
			final[e.Lock], hasFinal[e.Lock] = e.Set, true
		}
	}
	in := map[string]map[string]bool{}
	for res, set := range final {
		in[res] = map[string]bool{}
		for _, el := range set {
			hold, _, _ := strings.Cut(el, "#")
			switch {
			case in[res][el]:
				out = append(out, Violation{"C2", fmt.Sprintf("register %s: %s twice in the final set", res, el), 0, 0})
			case h.ByID[hold] == nil:
				out = append(out, Violation{"C2", fmt.Sprintf("register %s: phantom %s (no such acquisition)", res, el), 0, 0})
			case !accepted[res][el]:
				out = append(out, Violation{"C2", fmt.Sprintf("register %s: %s in the final set but never accepted", res, el), 0, 0})
			}
			in[res][el] = true
		}
	}
	for res, els := range accepted {
		if !hasFinal[res] {
			out = append(out, Violation{"C2", fmt.Sprintf("register %s: no final set reported", res), 0, 0})
			continue
		}
		for el := range els {
			if !in[res][el] {
				out = append(out, Violation{"C2", fmt.Sprintf("register %s: accepted %s missing from the final set", res, el), 0, 0})
			}
		}
	}
	for _, e := range h.Events {
		if e.Kind == KindWrite && e.OK && hasFinal[regName(e.Lock)] && !in[regName(e.Lock)][e.Elem] {
			out = append(out, Violation{"C2", fmt.Sprintf("register %s: acknowledged %s lost", regName(e.Lock), e.Elem), e.T, e.T})
		}
	}
	return out
}

// regName is the register resource of a lock path: its last element.
func regName(lock string) string { return lock[strings.LastIndexByte(lock, '/')+1:] }

// RegisterRead is the suite's final read of a ZooKeeper register (sync, then
// get), once every worker has stopped.
type RegisterRead struct {
	T0, T int64 // call and return (CLOCK_MONOTONIC)
	Ver   int32
	Data  string
}

// zkIn and zkOut are the operations of the ZooKeeper register model.
type zkIn struct {
	read bool
	tok  int64
}

type zkOut struct {
	ok, amb bool
	ver     int32
	last    int64 // read: the token the register holds
}

type zkState struct {
	ver       int32 // the node's version
	max, last int64 // highest token written, token written last
}

// zkRegisterModel is a fenced register: a write whose multi succeeded bumps
// the version by exactly one and carries a token no lower than any before
// it; a refused write changes nothing; a write of unknown outcome may have
// done either; the final read sees the last write's token at the current
// version.
var zkRegisterModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{zkState{}} },
	Step: func(state, input, output interface{}) []interface{} {
		st, in, out := state.(zkState), input.(zkIn), output.(zkOut)
		applied := zkState{ver: st.ver + 1, max: max(st.max, in.tok), last: in.tok}
		switch {
		case in.read:
			if out.ver == st.ver && out.last == st.last {
				return []interface{}{st}
			}
		case out.ok:
			if out.ver == st.ver+1 && in.tok >= st.max {
				return []interface{}{applied}
			}
		case out.amb:
			if in.tok >= st.max {
				return []interface{}{st, applied}
			}
			return []interface{}{st}
		default:
			return []interface{}{st}
		}
		return nil
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(zkIn), output.(zkOut)
		if in.read {
			return fmt.Sprintf("read -> v%d tok %d", out.ver, out.last)
		}
		return fmt.Sprintf("write tok %d -> ok=%v amb=%v v%d", in.tok, out.ok, out.amb, out.ver)
	},
}

// CheckZKRegister is C2's linearizability check: per lock, the guarded
// writes to its ZooKeeper register (each from its send to its answer; one
// never answered counts as pending to the end) together with the suite's
// final read must be linearizable for the fenced-register model, with
// real-time order taken from CLOCK_MONOTONIC across processes (porcupine,
// bounded by timeout; a search that times out is reported). Writes the
// store forgot (lostWrites) are reported as StoreChecker findings and
// judged as if of unknown outcome.
func CheckZKRegister(h *History, final *FinalState, timeout time.Duration) []Violation {
	if timeout <= 0 {
		timeout = time.Minute
	}
	out := append([]Violation(nil), h.forgottenFinds...)
	ops := map[string][]porcupine.Operation{}
	answered := map[string]bool{}
	for _, e := range h.Events {
		if e.Kind == KindZKWrite {
			answered[e.HoldID()+e.Elem] = true
		}
	}
	client := map[string]int{}
	for _, e := range h.Events {
		var op porcupine.Operation
		switch {
		case e.Kind == KindZKWrite:
			res := zkOut{ok: e.OK, amb: e.Amb, ver: e.Ver}
			if h.forgotten[keyOf(e)] { // forgotten by the store: as if its outcome were unknown
				res = zkOut{amb: true}
			}
			op = porcupine.Operation{Input: zkIn{tok: e.Token}, Call: e.T0, Output: res, Return: e.T}
			if res.amb {
				op.Return = math.MaxInt64 / 2 // may take effect at any time after its send
			}
		case e.Kind == KindZKInvoke && !answered[e.HoldID()+e.Elem]: // its worker died waiting
			op = porcupine.Operation{Input: zkIn{tok: e.Token}, Call: e.T, Output: zkOut{amb: true}, Return: math.MaxInt64 / 2}
		default:
			continue
		}
		w := e.Worker + "/" + strconv.Itoa(e.Client)
		if _, ok := client[w]; !ok {
			client[w] = len(client)
		}
		op.ClientId = client[w]
		ops[e.Lock] = append(ops[e.Lock], op)
	}
	if final != nil {
		for lock, r := range final.Registers {
			last, err := strconv.ParseInt(r.Data, 10, 64)
			if err != nil {
				return []Violation{{"C2", fmt.Sprintf("zk register of %s holds %q", lock, r.Data), r.T0, r.T}}
			}
			ops[lock] = append(ops[lock], porcupine.Operation{ClientId: len(client), Input: zkIn{read: true}, Call: r.T0, Output: zkOut{ver: r.Ver, last: last}, Return: r.T})
		}
	}
	locks := make([]string, 0, len(ops))
	for l := range ops {
		locks = append(locks, l)
	}
	sort.Strings(locks)
	for _, l := range locks {
		switch res := porcupine.CheckOperationsTimeout(zkRegisterModel.ToModel(), ops[l], timeout); res {
		case porcupine.Ok:
		case porcupine.Illegal:
			from, to := unlinearizable(ops[l], timeout)
			out = append(out, Violation{"C2", fmt.Sprintf("zk register of %s: %d writes not linearizable as a fenced register", l, len(ops[l])), from, to})
		default:
			out = append(out, Violation{"C2", fmt.Sprintf("zk register of %s: linearizability check %s after %v", l, res, timeout), 0, 0})
		}
	}
	return out
}

// unlinearizable returns the window of the first operation of an illegal
// history that no longest linearizable prefix porcupine found could take:
// from its call to its answer (a second after its call if it was never
// answered), or 0, 0 if the search, run again to find it, ends otherwise.
func unlinearizable(ops []porcupine.Operation, timeout time.Duration) (from, to int64) {
	res, info := porcupine.CheckOperationsVerbose(zkRegisterModel.ToModel(), ops, timeout)
	if res != porcupine.Illegal {
		return 0, 0
	}
	placed := map[int]bool{}
	best := 0
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) < best {
				continue
			}
			if len(lin) > best {
				best, placed = len(lin), map[int]bool{}
			}
			for _, id := range lin {
				placed[id] = true
			}
		}
	}
	first := -1
	for i, op := range ops {
		if !placed[i] && (first < 0 || op.Call < ops[first].Call) {
			first = i
		}
	}
	if first < 0 {
		return 0, 0
	}
	from, to = ops[first].Call, ops[first].Return
	if to >= math.MaxInt64/2 {
		to = from + int64(time.Second)
	}
	return from, to
}
