// Package scenarios holds the reliability scenarios that need an ensemble
// in containers (S18-S20: partitions between members, rolling restarts),
// run by the reliability suite's harness and checked by its checkers C1-C7
// (github.com/zklock/zklock/reliability). It lives in the containers
// module so that the zklock module does not depend on testcontainers-go.
// Run it with make reliability-containers (part of make soak).
package containers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/zklock/zklock/reliability"
	"github.com/zklock/zklock/zktest"
	zkcontainers "github.com/zklock/zklock/zktest/containers"
)

// Fault names these scenarios write to the nemesis log.
const (
	// FaultPartitionLeaderHolder: the leader alone on one side, with the
	// client (worker process) of a current holder; every other member and
	// client on the other side.
	FaultPartitionLeaderHolder = "partition-leader+holder"
	// FaultPartitionMember: a follower that a holder's session is
	// connected to is partitioned away and resets the clients' connections.
	FaultPartitionMember = "partition-member"
	// FaultRestartMember: docker stop of a member, then start.
	FaultRestartMember = "restart-member"
)

// Scenarios returns S18-S20 at the durations of mode ("smoke", "short" or
// "soak", as reliability.Scenarios).
func Scenarios(mode reliability.Mode) []*reliability.Scenario {
	d := func(smoke, short, soak time.Duration) time.Duration {
		return reliability.ByMode(mode, smoke, short, soak)
	}
	s := time.Second
	T, T2 := 2*s, 4*s
	if mode == "soak" {
		T, T2 = 4*s, 8*s
	}
	return []*reliability.Scenario{
		S18(T, d(25*s, 40*s, 180*s), d(12*s, 12*s, 20*s)),
		S19(T2, d(20*s, 40*s, 180*s), d(7*s, 8*s, 10*s)),
		S20(T, d(25*s, 40*s, 180*s), d(6*s, 6*s, 10*s)),
	}
}

// Negatives returns the negative controls these scenarios must catch: N3
// (the worker ignores its loss signal) under S18.
func Negatives() []*reliability.Scenario {
	n := S18(2*time.Second, 40*time.Second, 12*time.Second)
	n.Negative = "N3"
	return []*reliability.Scenario{n}
}

func base(name, title string, session, dur time.Duration) (*reliability.Scenario, **zkcontainers.Cluster) {
	cc := new(*zkcontainers.Cluster)
	sc := &reliability.Scenario{Name: name, Title: title, Servers: 3, Workers: 4, Clients: 8, Locks: 4,
		Session: session, HoldMax: 5 * time.Millisecond, Duration: dur,
		Cluster: func(t testing.TB, servers int) *zktest.Cluster {
			c := zkcontainers.Start(t, zktest.WithServers(servers))
			*cc = c
			return c.Cluster
		}}
	return sc, cc
}

// S18: the leader is partitioned into a minority together with the client
// of a current holder, for longer than the session timeout: the majority
// elects a new leader, the holder's session expires there and a new holder
// acquires; the old holder must have been told of its loss first (C1), and
// the fenced register loses nothing (C2).
func S18(session, dur, period time.Duration) *reliability.Scenario {
	sc, cc := base("S18", "leader + holder's client in a minority > T", session, dur)
	sc.Proxies = true // each worker's own proxy cuts its client links
	// Some holders keep their lock for 6T (longer than a partition) or
	// until told of its loss, so that the partition finds a holder mid-hold
	// that cannot release before the majority's new holder acquires (N3
	// then overlaps).
	sc.LongEvery, sc.LongHold = 100, 6*session
	sc.Nemesis = func(ctx context.Context, e *reliability.Env) {
		everyLeader(ctx, e, "S18", period, func(leader int) {
			c := *cc
			w := longHolderProc(e)
			majority := othersThan(e.C, leader)
			target := fmt.Sprintf("zk%d+%s", leader+1, w.Name)
			e.Fault(FaultPartitionLeaderHolder, target, session+session/2+3*time.Second, func() error {
				for _, o := range e.Workers {
					if o == w {
						o.Proxy.Isolate(majority...)
					} else {
						o.Proxy.Isolate(leader)
					}
				}
				return c.Partition(majority, []int{leader})
			}, func() error {
				err := c.Heal()
				for _, o := range e.Workers {
					o.Proxy.Heal()
				}
				return err
			})
		})
	}
	return sc
}

// S19: a follower that a holder's session is connected to is partitioned
// away from the other members and from the clients, which it refuses (TCP
// reset): the holder's client reconnects to another member within the
// loss limit and keeps its lock, with the same node and token (Survive).
func S19(session, dur, period time.Duration) *reliability.Scenario {
	sc, cc := base("S19", "holder's server partitioned away, reconnect", session, dur)
	sc.Survive = true
	sc.Nemesis = func(ctx context.Context, e *reliability.Env) {
		everyLeader(ctx, e, "S19", period, func(leader int) {
			c := *cc
			for range 20 {
				name, _, sid, ok := e.Holder()
				if !ok {
					continue
				}
				m := memberOf(e.C, sid)
				if m < 0 || m == leader {
					continue // a follower's loss only: a leader's would need an election
				}
				rest := append([]int{zkcontainers.Host}, othersThan(e.C, m)...)
				e.Fault(FaultPartitionMember, fmt.Sprintf("zk%d(%s %#x)", m+1, name, sid), 3*time.Second, func() error {
					if err := c.Partition(rest, []int{m}); err != nil {
						return err
					}
					return c.RejectClients(m)
				}, c.Heal)
				return
			}
			e.T.Logf("S19: no holder on a follower this round")
		})
	}
	return sc
}

// S20: rolling restart of the members, one at a time (docker stop, 1s
// down, start), under contention: no violation, no orphan node, every
// waiter eventually acquires (C4).
func S20(session, dur, period time.Duration) *reliability.Scenario {
	sc, _ := base("S20", "rolling restart of all members, contention", session, dur)
	sc.Nemesis = func(ctx context.Context, e *reliability.Env) {
		next := 0
		reliability.Every(ctx, period, func() {
			i := next % e.C.Size()
			next++
			e.Fault(FaultRestartMember, "zk"+strconv.Itoa(i+1), time.Second,
				func() error { return e.C.Stop(i) }, func() error { return e.C.Start(i) })
		})
	}
	return sc
}

// everyLeader calls f with the current leader every period until ctx
// ends; a round whose leader is unknown is logged, as scenario name's, and
// skipped.
func everyLeader(ctx context.Context, e *reliability.Env, name string, period time.Duration, f func(leader int)) {
	reliability.Every(ctx, period, func() {
		leader, err := e.C.Leader()
		if err != nil {
			e.T.Logf("%s: leader: %v", name, err)
			return
		}
		f(leader)
	})
}

// othersThan returns the members of c but m, in order.
func othersThan(c *zktest.Cluster, m int) []int {
	var out []int
	for i := range c.Size() {
		if i != m {
			out = append(out, i)
		}
	}
	return out
}

// longHolderProc returns the process of a holder whose node still exists
// 200ms later (a long hold, which the partition will find mid-hold), or
// else holderProc's choice.
func longHolderProc(e *reliability.Env) *reliability.Proc {
	for range 30 {
		name, node, _, ok := e.Holder()
		if !ok {
			continue
		}
		time.Sleep(200 * time.Millisecond)
		if ok, _, err := e.Conn.Exists(node); err == nil && ok {
			if w := e.Worker(name); w != nil {
				return w
			}
		}
	}
	return holderProc(e)
}

// holderProc returns the process of a current holder, or a random worker.
func holderProc(e *reliability.Env) *reliability.Proc {
	for range 20 {
		if name, _, _, ok := e.Holder(); ok {
			if w := e.Worker(name); w != nil {
				return w
			}
		}
	}
	return e.Workers[rand.IntN(len(e.Workers))]
}

var sidRe = regexp.MustCompile(`sid=(0x[0-9a-f]+)`)

// memberOf returns the member whose `cons` lists session sid, or -1.
func memberOf(c *zktest.Cluster, sid int64) int {
	want := fmt.Sprintf("%#x", sid)
	for i := range c.Size() {
		out, err := c.FourLetter(i, "cons")
		if err != nil {
			continue
		}
		for _, m := range sidRe.FindAllStringSubmatch(out, -1) {
			if m[1] == want {
				return i
			}
		}
	}
	return -1
}
