package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock/internal/wire"
)

// The census's held run: zklock's mutex and go-zookeeper's lock contended
// (one goroutine per session) with each holder holding for censusHold, long
// enough for a hold's background requests to be sent and answered.
const (
	measureHeldCont = "contended-held"
	censusHold      = time.Millisecond
)

// census runs every target briefly through counting relays and records the
// ZooKeeper requests and watch notifications per operation: per cycle
// uncontended, per handoff contended (sessions, then goroutines), with the
// timeline's detail (CensusDetail): reads and writes, which member served
// them, what a session waited on. It runs on the standalone server (every
// target) and, when there is one, on the ensemble (the targets of the
// ensemble phase; a relay in front of each member, sessions spread over
// them as in the timed runs). The timed runs do not go through relays,
// which would add a hop.
func census(cfg Config, srv Server, targets []Target, say func(string, ...any)) ([]Record, error) {
	out, err := censusOn(cfg, Standalone, []string{srv.Addr}, []string{"standalone"}, targets, say)
	if err != nil || len(srv.Ensemble) == 0 {
		return out, err
	}
	names := make([]string, len(srv.Ensemble))
	for i := range names {
		names[i] = fmt.Sprintf("follower%d", i+1)
	}
	names[len(names)-1] = "leader" // Server.Ensemble: followers first
	more, err := censusOn(cfg, Ensemble, srv.Ensemble, names, phaseTargets(targets), say)
	return append(out, more...), err
}

// censusOn is the census of targets on the servers addrs (named names).
func censusOn(cfg Config, setup string, addrs, names []string, targets []Target, say func(string, ...any)) ([]Record, error) {
	rec := newRecorder()
	var relays []string
	for i, a := range addrs {
		rl, err := newRelayOn(a, names[i], rec)
		if err != nil {
			return nil, err
		}
		defer rl.Close()
		relays = append(relays, rl.Addr())
	}
	var out []Record
	for _, t := range targets {
		for _, m := range []struct {
			measure           string
			sessions, workers int
		}{{measureUnc, 1, 1}, {measureCont, cfg.Contenders, cfg.Contenders}, {measureGorout, 1, cfg.Goroutines}, {measureHeldCont, cfg.Contenders, cfg.Contenders}} {
			g, isGo := t.(*goTarget)
			switch {
			case floor(t.Name()) && m.measure != measureUnc:
				continue // it excludes nothing
			case m.measure == measureHeldCont && (!isGo || (t.Name() != ZklockMutex && t.Name() != GoZKLock)):
				continue
			}
			path := fmt.Sprintf("/bench/%s/census-%s-%s", t.Name(), setup, m.measure)
			var r Run
			var err error
			if m.measure == measureUnc {
				// Warm up through the relay too, then count only the timed part.
				if _, err = t.Uncontended(relays[0], path, 0, 100*time.Millisecond); err == nil {
					rec.Reset(true)
					r, err = t.Uncontended(relays[0], path, 0, cfg.Census)
				}
			} else if m.measure == measureHeldCont {
				rec.Reset(true)
				r, err = g.ContendedHeld(relays, path, m.sessions, censusHold, cfg.Census)
			} else {
				rec.Reset(true)
				r, err = t.Contended(relays, path, m.sessions, m.workers, cfg.Census)
			}
			if err != nil {
				return nil, fmt.Errorf("%s census %s %s: %w", t.Name(), setup, m.measure, err)
			}
			reqs, total, notifs := rec.Counts()
			frames := rec.Frames()
			rec.Reset(false)
			for _, f := range frames { // the held runs' markers are the harness's
				if f.toServer && f.path == holdMarker {
					reqs[wire.OpExists]--
					total--
				}
			}
			c := Record{Target: t.Name(), Measure: censusPrefix + m.measure, Setup: setup, Requests: map[string]int{}}
			for op, n := range reqs {
				c.Requests[opName(op)] = n
			}
			if r.Ops > 0 {
				c.RequestsPerHandoff = float64(total) / float64(r.Ops)
				c.NotificationsPerHandoff = float64(notifs) / float64(r.Ops)
			}
			if m.measure != measureGorout {
				c.Census = analyseCensus(frames, r.Ops, m.measure != measureUnc)
				if m.measure == measureHeldCont {
					c.Census.Path.HoldMs = ms64(int64(censusHold))
				}
			}
			say("requests %-10s %-22s %-11s %5.2f requests/op %5.2f notifications/op (%d ops) %s",
				setup, t.Name(), m.measure, c.RequestsPerHandoff, c.NotificationsPerHandoff, r.Ops, reqString(c.Requests))
			out = append(out, c)
		}
	}
	return out, nil
}

func opName(op int32) string {
	names := map[int32]string{1: "create", 2: "delete", 3: "exists", 4: "getData", 5: "setData",
		8: "getChildren", 12: "getChildren2", 14: "multi", 15: "create2", 19: "createContainer",
		9: "sync", 101: "setWatches", 17: "checkWatches", 18: "removeWatches", 106: "addWatch"}
	if s, ok := names[op]; ok {
		return s
	}
	return "op" + strconv.Itoa(int(op))
}

func reqString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, m[k])
	}
	return strings.TrimSpace(b.String())
}
