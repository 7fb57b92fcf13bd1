package bench

import (
	"fmt"
	"time"
)

// census runs every target briefly through a counting relay and records the
// ZooKeeper requests and watch notifications per operation: per cycle
// uncontended, per handoff contended (sessions, then goroutines). The timed
// runs do not go through the relay, which would add a hop.
func census(cfg Config, srv Server, targets []Target, say func(string, ...any)) ([]Record, error) {
	rl, err := newRelay(srv.Addr)
	if err != nil {
		return nil, err
	}
	defer rl.Close()
	var out []Record
	for _, t := range targets {
		for _, m := range []struct {
			measure           string
			sessions, workers int
		}{{measureUnc, 1, 1}, {measureCont, cfg.Contenders, cfg.Contenders}, {measureGorout, 1, cfg.Goroutines}} {
			if floor(t.Name()) && m.measure != measureUnc {
				continue // it excludes nothing
			}
			path := fmt.Sprintf("/bench/%s/census-%s", t.Name(), m.measure)
			var r Run
			var err error
			if m.measure == measureUnc {
				// Warm up through the relay too, then count only the timed part.
				if _, err = t.Uncontended(rl.Addr(), path, 0, 100*time.Millisecond); err == nil {
					rl.Reset()
					r, err = t.Uncontended(rl.Addr(), path, 0, cfg.Census)
				}
			} else {
				rl.Reset()
				r, err = t.Contended([]string{rl.Addr()}, path, m.sessions, m.workers, cfg.Census)
			}
			if err != nil {
				return nil, fmt.Errorf("%s census %s: %w", t.Name(), m.measure, err)
			}
			reqs, total, notifs := rl.Counts()
			rec := Record{Target: t.Name(), Measure: censusPrefix + m.measure, Setup: Standalone, Requests: map[string]int{}}
			for op, c := range reqs {
				rec.Requests[opName(op)] = c
			}
			if r.Ops > 0 {
				rec.RequestsPerHandoff = float64(total) / float64(r.Ops)
				rec.NotificationsPerHandoff = float64(notifs) / float64(r.Ops)
			}
			say("requests %-22s %-11s %5.2f requests/op %5.2f notifications/op (%d ops) %s",
				t.Name(), m.measure, rec.RequestsPerHandoff, rec.NotificationsPerHandoff, r.Ops, reqString(rec.Requests))
			out = append(out, rec)
		}
	}
	return out, nil
}
