package reliability

import (
	"fmt"
	"sort"
	"strings"
)

// pgWriteOf is one write to the PostgreSQL register as its worker logged
// it: when its transaction began and ended, and the outcome it saw ("" if
// its worker never logged one).
type pgWriteOf struct {
	inv, out Event
	seen     bool // out was logged
}

func (w *pgWriteOf) window() (int64, int64) {
	if w.seen {
		return w.inv.T, w.out.T
	}
	return w.inv.T, w.inv.T
}

// CheckDatabase is C2 on the PostgreSQL register (S24), judged from the
// database's own rows (read after the run: pgrow, pgfence) and the outcome
// each worker saw of each transaction (pginvoke, pgwrite):
//
//   - order: in each resource's commit order, no row has a token lower
//     than a row of its ensemble era committed before it (a stale
//     holder's write committed), nor an era older than a row committed
//     before it (a holder of an ensemble since rebuilt committed after the
//     rebuilt one's; eras are ordered by their first acquisition);
//   - nothing lost: every write whose COMMIT succeeded is a row;
//   - nothing phantom: every row is a write that a worker began, of an
//     acquisition of the history, in one row only, and none whose
//     transaction was refused as stale or failed before COMMIT;
//   - refusals justified: a write refused as stale has a row of a greater
//     token of its era on its resource, one refused as of another era a
//     row or the fence in another era;
//   - the fence agrees: where the fence's table has a row for a resource,
//     its token is the greatest token of the resource's rows of its era (1,
//     a rebased row's, if there are none), and its era is not older than
//     the latest row's.
//
// A write whose COMMIT went unanswered (OutUnknown), or that its worker
// began and never logged an outcome of, may be a row or not. A history
// with writes but without a complete read of the database (pgread) is one
// violation; one without writes or rows has nothing to check.
func CheckDatabase(h *History) []Violation {
	writes := map[string]*pgWriteOf{} // element -> write
	var elems []string
	var rows, fences []Event
	read := false
	for _, e := range h.Events {
		switch e.Kind {
		case KindPGInvoke:
			if writes[e.Elem] == nil {
				elems = append(elems, e.Elem)
			}
			writes[e.Elem] = &pgWriteOf{inv: e}
		case KindPGWrite:
			if w := writes[e.Elem]; w != nil {
				w.out, w.seen = e, true
			}
		case KindPGRow:
			rows = append(rows, e)
		case KindPGFence:
			fences = append(fences, e)
		case KindPGRead:
			read = true
		}
	}
	if len(writes) == 0 && len(rows) == 0 {
		return nil
	}
	if !read {
		return []Violation{{"C2", fmt.Sprintf("database: %d writes but the database was never read", len(writes)), 0, 0}}
	}
	var out []Violation
	add := func(from, to int64, format string, args ...any) {
		out = append(out, Violation{"C2", "database: " + fmt.Sprintf(format, args...), from, to})
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Lock != rows[j].Lock {
			return rows[i].Lock < rows[j].Lock
		}
		return rows[i].Seq < rows[j].Seq
	})
	inDB := map[string]bool{}
	order := eraOrder(h)
	maxTok := map[eraKey]int64{}     // resource and era -> greatest token of its rows so far
	maxElem := map[eraKey]string{}   // ... and its element
	lastEra := map[string]eraOfRow{} // resource -> the latest era of its rows so far
	otherEra := map[string]bool{}    // resource -> it has rows of more than one era
	for i, r := range rows {
		k := eraKey{r.Lock, r.Era}
		w := writes[r.Elem]
		from, to := int64(0), int64(0)
		if w != nil {
			from, to = w.window()
		}
		if i > 0 && rows[i-1].Lock == r.Lock && rows[i-1].Seq == r.Seq {
			add(from, to, "%s: two rows at place %d (%s, %s)", r.Lock, r.Seq, rows[i-1].Elem, r.Elem)
		}
		if r.Token < maxTok[k] {
			if b := writes[maxElem[k]]; b != nil {
				bf, bt := b.window()
				from, to = min(from, bf), max(to, bt)
			}
			add(from, to, "%s: token %d (%s) committed at place %d after token %d (%s)", r.Lock, r.Token, r.Elem, r.Seq, maxTok[k], maxElem[k])
		}
		if r.Token > maxTok[k] {
			maxTok[k], maxElem[k] = r.Token, r.Elem
		}
		if last, ok := lastEra[r.Lock]; !ok || order[r.Era] > order[last.era] {
			otherEra[r.Lock] = otherEra[r.Lock] || ok
			lastEra[r.Lock] = eraOfRow{r.Era, r.Elem, r.Token}
		} else if order[r.Era] < order[last.era] {
			add(from, to, "%s: token %d (%s) of ensemble era %q committed at place %d after token %d (%s) of the later era %q",
				r.Lock, r.Token, r.Elem, r.Era, r.Seq, last.token, last.elem, last.era)
			otherEra[r.Lock] = true
		}
		hold, _, _ := strings.Cut(r.Elem, "#")
		switch {
		case inDB[r.Elem]:
			add(from, to, "%s: %s in two rows", r.Lock, r.Elem)
		case w == nil || h.ByID[hold] == nil:
			add(0, 0, "%s: phantom row %s (token %d): no such write", r.Lock, r.Elem, r.Token)
		case w.seen && (w.out.Out == OutStale || w.out.Out == OutError):
			add(from, to, "%s: %s (token %d) is a row, but its transaction was %s: %s", r.Lock, r.Elem, r.Token, w.out.Out, w.out.Err)
		}
		inDB[r.Elem] = true
	}
	fenceEra := map[string]string{}
	for _, f := range fences {
		fenceEra[f.Lock] = f.Era
	}
	for _, el := range elems {
		w := writes[el]
		if !w.seen {
			continue
		}
		res := regName(w.inv.Lock)
		from, to := w.window()
		switch w.out.Out {
		case OutCommitted:
			if !inDB[el] {
				add(from, to, "%s: %s (token %d) committed but not a row", res, el, w.out.Token)
			}
		case OutStale:
			if k := (eraKey{res, w.inv.Era}); maxTok[k] <= w.out.Token {
				add(from, to, "%s: %s (token %d) refused as stale, but no row of its era has a greater token (greatest %d)", res, el, w.out.Token, maxTok[k])
			}
		case OutOtherEra:
			if !otherEra[res] && lastEra[res].era == w.inv.Era && fenceEra[res] == w.inv.Era {
				add(from, to, "%s: %s (token %d) refused as of another ensemble era, but its era %q is the only one", res, el, w.out.Token, w.inv.Era)
			}
		}
	}
	for _, f := range fences {
		k := eraKey{f.Lock, f.Era}
		if want, ok := maxTok[k]; f.Token != want && (ok || f.Token != 1) {
			add(0, 0, "%s: the fence holds token %d of era %q, the rows' greatest of that era is %d (%s)", f.Lock, f.Token, f.Era, want, maxElem[k])
		}
		if last := lastEra[f.Lock]; order[f.Era] < order[last.era] {
			add(0, 0, "%s: the fence is in era %q, older than its latest row's, %q (%s)", f.Lock, f.Era, last.era, last.elem)
		}
	}
	return out
}

// eraKey names a resource's rows of one ensemble era.
type eraKey struct{ resource, era string }

// eraOfRow is the latest era of a resource's rows, and its row.
type eraOfRow struct {
	era, elem string
	token     int64
}

// eraOrder numbers the ensemble eras of a history's acquisitions in the
// order of each one's first acquisition (an ensemble rebuilt from empty
// comes after the one it replaces); "" is 0.
func eraOrder(h *History) map[string]int {
	order := map[string]int{"": 0}
	for _, a := range h.Acqs {
		if _, ok := order[a.Era]; !ok {
			order[a.Era] = len(order)
		}
	}
	return order
}

// DatabaseOutcomes counts the PostgreSQL register's transactions by the
// outcome their workers saw ("pending": began, no outcome logged) and its
// rows ("rows"); nil for a history without the database.
func DatabaseOutcomes(h *History) map[string]int {
	var m map[string]int
	inc := func(k string) {
		if m == nil {
			m = map[string]int{}
		}
		m[k]++
	}
	outs := map[string]bool{}
	for _, e := range h.Events {
		if e.Kind == KindPGWrite {
			outs[e.Elem] = true
		}
	}
	for _, e := range h.Events {
		switch {
		case e.Kind == KindPGWrite:
			inc(e.Out)
		case e.Kind == KindPGInvoke && !outs[e.Elem]:
			inc("pending")
		case e.Kind == KindPGRow:
			inc("rows")
		}
	}
	return m
}
