package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock"
)

// The schedule recipe (S27): every client of every worker takes part in
// one zklock.Schedule at SchedulePath(root), ticking every TickEvery, and
// its job logs tick-start as its first act and tick-end as its last. C8
// (CheckTicks) judges the starts; TickReport says which ticks ran.
const (
	KindTickStart = "tick-start" // a job started: Op is the tick (Unix ms), Token the leader's, Node the claim
	KindTickEnd   = "tick-end"   // ... and ended
)

// TickEvery is the period of the scenarios' schedule.
const TickEvery = time.Second

// tickHistory is how many claims the workers keep: every claim of a run,
// so that the report can tell each tick's claim.
const tickHistory = zklock.MaxTickHistory

// SchedulePath is the schedule's path under a scenario's root.
func SchedulePath(root string) string { return root + "/sched" }

// runScheduleClient is one client of the schedule recipe on sess: it takes
// part until ctx ends. Each job lasts between HoldMin and HoldMax (LongHold
// one time in LongEvery, or until its tick's context ends).
func runScheduleClient(ctx context.Context, cfg WorkerConfig, client int, log *Log, sess *zklock.Session) error {
	sc, err := zklock.NewSchedule(sess, SchedulePath(cfg.Root), TickEvery,
		zklock.WithScheduleID(cfg.Name), zklock.WithHistory(tickHistory))
	if err != nil {
		return err
	}
	err = sc.Run(ctx, func(tctx context.Context, t zklock.Tick) error {
		base := Event{Worker: cfg.Name, Client: client, Op: t.Time.UnixMilli(), Lock: SchedulePath(cfg.Root), Token: t.Token,
			Session: t.Hold.SessionID(), Node: t.Node}
		start := base
		start.Kind = KindTickStart
		log.Add(start)
		log.Flush() // the start is on disk before the job acts, even if we are SIGKILLed next
		d := cfg.HoldMin
		if span := cfg.HoldMax - cfg.HoldMin; span > 0 {
			d += rand.N(span)
		}
		if cfg.LongEvery > 0 && rand.IntN(cfg.LongEvery) == 0 {
			d = cfg.LongHold
		}
		select {
		case <-time.After(d):
		case <-tctx.Done():
		}
		end := base
		end.Kind = KindTickEnd
		if tctx.Err() != nil {
			end.Err = context.Cause(tctx).Error()
		}
		log.Add(end)
		return nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// ClaimRead is one claim node of the schedule, read once the run is over.
type ClaimRead struct {
	Tick   int64  `json:"tick"` // Unix ms, the node's name
	Token  int64  `json:"tok"`
	ID     string `json:"id"`
	Czxid  int64  `json:"czxid"`
	LateMs int64  `json:"late_ms,omitempty"`
	Err    string `json:"err,omitempty"` // why it could not be read
}

// readClaims reads the schedule's claim nodes under root into f.Claims,
// in czxid order.
func (f *FinalState) readClaims(conn *zk.Conn, root string) {
	dir := SchedulePath(root) + "/ticks"
	names, _, err := conn.Children(dir)
	if err != nil {
		f.Errors = append(f.Errors, fmt.Sprintf("list %s: %v", dir, err))
		return
	}
	for _, n := range names {
		ms, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			continue
		}
		c := ClaimRead{Tick: ms}
		data, st, err := conn.Get(dir + "/" + n)
		if err == nil {
			var rec struct {
				ID     string `json:"id"`
				Token  int64  `json:"token"`
				LateMs int64  `json:"late_ms"`
			}
			err = json.Unmarshal(data, &rec)
			c.ID, c.Token, c.LateMs, c.Czxid = rec.ID, rec.Token, rec.LateMs, st.Czxid
		}
		if err != nil {
			c.Err = err.Error()
		}
		f.Claims = append(f.Claims, c)
	}
	sort.Slice(f.Claims, func(i, j int) bool { return f.Claims[i].Czxid < f.Claims[j].Czxid })
}

// CheckTicks is C8, the schedule's checker:
//
//   - no tick's job starts twice;
//   - no job of a deposed leader starts after a newer leader's claim:
//     leaders' tokens grow with each term, and a leader's claim is
//     committed before its job's tick-start is logged, so a start whose
//     token is below that of an earlier start is such a job (one logged in
//     the instant between another leader's claim and that leader's own
//     tick-start escapes this);
//   - no claim of a deposed leader: in the order ZooKeeper committed them
//     (czxid), the claims' tokens never decrease, since a leader claims
//     only while its node exists and its successor's term starts after
//     that node is gone.
func CheckTicks(h *History, final *FinalState) []Violation {
	var v []Violation
	first := map[int64]Event{} // tick -> its first start
	var newest Event           // the start with the highest token so far
	for _, e := range h.Events {
		if e.Kind != KindTickStart {
			continue
		}
		if f, ok := first[e.Op]; ok {
			v = append(v, Violation{Checker: "C8", From: f.T, To: e.T, Detail: fmt.Sprintf(
				"tick %s ran twice: %s client %d (token %d) and %s client %d (token %d)",
				tickText(e.Op), f.Worker, f.Client, f.Token, e.Worker, e.Client, e.Token)})
		} else {
			first[e.Op] = e
		}
		if e.Token < newest.Token {
			v = append(v, Violation{Checker: "C8", From: newest.T, To: e.T, Detail: fmt.Sprintf(
				"a deposed leader's job started: %s client %d (token %d) began tick %s %s after %s client %d (token %d) had claimed tick %s",
				e.Worker, e.Client, e.Token, tickText(e.Op), ms(e.T-newest.T), newest.Worker, newest.Client, newest.Token, tickText(newest.Op))})
		}
		if e.Token > newest.Token {
			newest = e
		}
	}
	if final == nil {
		return v
	}
	var top ClaimRead
	for _, c := range final.Claims {
		if c.Err != "" {
			continue
		}
		if c.Token < top.Token {
			v = append(v, Violation{Checker: "C8", Detail: fmt.Sprintf(
				"a deposed leader claimed: tick %s by %s (token %d, czxid %#x) after tick %s by %s (token %d, czxid %#x)",
				tickText(c.Tick), c.ID, c.Token, c.Czxid, tickText(top.Tick), top.ID, top.Token, top.Czxid)})
		}
		if c.Token > top.Token {
			top = c
		}
	}
	return v
}

// tickText is a tick's time, from its Unix milliseconds.
func tickText(unixMs int64) string {
	return time.UnixMilli(unixMs).UTC().Format("15:04:05.000")
}

// Ticks is a schedule run's account of its ticks, from the first tick any
// job started to the last: each ran (a job started), was claimed but no
// job started (a leader killed or deposed between its claim and its job;
// OutcomeAbandoned or a recorded failure), or was missed (no claim).
type Ticks struct {
	Ran        int     `json:"ran"`
	Late       int     `json:"late,omitempty"`      // ran, but claimed more than the due grace after its time (from the claims)
	NotRun     int     `json:"not_run,omitempty"`   // claimed, no job started
	Missed     int     `json:"missed"`              // no claim
	MissedAt   []int64 `json:"missed_at,omitempty"` // the missed ticks (Unix ms), at most 100
	NotRunAt   []int64 `json:"not_run_at,omitempty"`
	Unreadable int     `json:"unreadable,omitempty"` // claims whose data could not be read
}

// TickReport accounts for every tick between the first and the last that
// started, from h's starts and the claims left in ZooKeeper (final).
func TickReport(h *History, final *FinalState) *Ticks {
	started := map[int64]bool{}
	lo, hi := int64(0), int64(0)
	for _, e := range h.Events {
		if e.Kind != KindTickStart {
			continue
		}
		started[e.Op] = true
		if lo == 0 || e.Op < lo {
			lo = e.Op
		}
		hi = max(hi, e.Op)
	}
	if lo == 0 {
		return nil
	}
	claimed := map[int64]bool{}
	r := &Ticks{}
	for _, c := range final.Claims {
		claimed[c.Tick] = true
		switch {
		case c.Err != "":
			r.Unreadable++
		case started[c.Tick] && c.LateMs > 0:
			r.Late++
		}
	}
	step := TickEvery.Milliseconds()
	for t := lo; t <= hi; t += step {
		switch {
		case started[t]:
			r.Ran++
		case claimed[t]:
			r.NotRun++
			if len(r.NotRunAt) < 100 {
				r.NotRunAt = append(r.NotRunAt, t)
			}
		default:
			r.Missed++
			if len(r.MissedAt) < 100 {
				r.MissedAt = append(r.MissedAt, t)
			}
		}
	}
	return r
}

// ScheduleScenario is S27: a 1 s schedule (TickEvery) run by 4 workers of
// one session each, for d, while its leader is, in turn, SIGSTOPped past
// its session (1.5 T), expired on the server, and SIGKILLed (a new process
// takes its place) every 4 s; cut off from ZooKeeper through its proxy for
// 1.5 T (a partition) every 11 s; and its election node deleted by another
// client (an operator forcing a handover) every 7 s. Jobs last 50-300 ms,
// one in 4 for T or until its tick's context ends. C8 judges the ticks; the
// result's Ticks says which ran and which were missed.
func ScheduleScenario(d, T time.Duration) *Scenario {
	s := time.Second
	return &Scenario{Name: "S27", Title: "1s schedule: leader killed, paused, partitioned", Servers: 1, Workers: 4, Clients: 1,
		Recipe: "schedule", Session: T, HoldMin: 50 * time.Millisecond, HoldMax: 300 * time.Millisecond, LongEvery: 4, LongHold: T,
		Duration: d, Proxies: true,
		Nemesis: Together(DisruptLeader(4*s, T+T/2), BlackholeHolder(11*s, T+T/2), DeleteHolderNode(7*s))}
}

// ScheduleNegative is N9 under S27: claims made without the check of the
// leader's node, by leaders that do not watch their own node (the
// library's N9 hooks), whose node another client deletes every 3 s: the
// deposed leader keeps claiming, unchecked, beside its successor, and some
// of its claims land after the successor's. C8 must catch them. (A leader
// that is paused or cut off is no test of the check: ZooKeeper applies
// nothing of an expired session, and the next session's leader plans from
// the newest claim, so a stale claim finds its tick taken.)
func ScheduleNegative(d, T time.Duration) *Scenario {
	sc := ScheduleScenario(d, T)
	sc.Negative = "N9"
	sc.Nemesis = DeleteHolderNode(3 * time.Second)
	return sc
}
