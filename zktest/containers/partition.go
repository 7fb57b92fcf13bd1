package containers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
)

// Host stands for the test process (every client running on this machine)
// in Partition's groups.
const Host = -1

// Partition splits the cluster into groups: packets between members of
// different groups are dropped, both ways, on every port (quorum, election
// and client), by packet filters inside the members' containers, as in a
// real network partition: nothing is refused or reset, open connections
// hang until their own timeouts. Every member must be named in exactly one
// group (else ErrBadPartition). Host may be named in one group: the test
// process then reaches only that group's members (its connections to the
// others hang as well, and Cluster.FourLetter to them fails; use
// FourLetterInside); without Host it keeps reaching every member. To cut
// one client off from some members only, give it its own zktest.Proxy and
// call Proxy.Isolate.
//
// A Partition replaces the previous one and RejectClients' rejections. A
// stopped or killed member gets its filters when it is started again,
// before its server runs. Partitioning a paused member fails (its
// container cannot run the filter update); so does a member whose update
// fails, and the cluster is then in an unknown state until Heal.
func (c *Cluster) Partition(groups ...[]int) error {
	n := len(c.b.members)
	assign := map[int]int{}
	for g, grp := range groups {
		for _, m := range grp {
			if m != Host && (m < 0 || m >= n) {
				return fmt.Errorf("%w: member %d out of range [0,%d)", ErrBadPartition, m, n)
			}
			if _, dup := assign[m]; dup {
				return fmt.Errorf("%w: member %d is in two groups", ErrBadPartition, m)
			}
			assign[m] = g
		}
	}
	for m := range n {
		if _, ok := assign[m]; !ok {
			return fmt.Errorf("%w: member %d is in no group", ErrBadPartition, m)
		}
	}
	c.b.pmu.Lock()
	c.b.groups, c.b.reject = assign, nil
	c.b.pmu.Unlock()
	return c.b.applyAll()
}

// RejectClients makes members refuse the test process's client
// connections with TCP resets (like a firewall that rejects rather than
// drops) until Heal or the next Partition, in addition to the current
// partition: a client connected to them sees its connection reset at its
// next packet and moves on to another member at once. Links between
// members are not affected.
func (c *Cluster) RejectClients(members ...int) error {
	c.b.pmu.Lock()
	if c.b.reject == nil {
		c.b.reject = map[int]bool{}
	}
	for _, m := range members {
		if m < 0 || m >= len(c.b.members) {
			c.b.pmu.Unlock()
			return fmt.Errorf("%w: member %d out of range [0,%d)", ErrBadPartition, m, len(c.b.members))
		}
		c.b.reject[m] = true
	}
	c.b.pmu.Unlock()
	return c.b.applyAll()
}

// Heal removes every partition and rejection. Connections that were cut
// resume where they were (queued packets are retransmitted) unless their
// own timeouts closed them meanwhile.
func (c *Cluster) Heal() error {
	c.b.pmu.Lock()
	c.b.groups, c.b.reject = nil, nil
	c.b.pmu.Unlock()
	return c.b.applyAll()
}

// hostReaches reports whether the current partition lets the test process
// reach member i.
func (b *backend) hostReaches(i int) bool {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	g, ok := b.groups[Host]
	return !ok || b.groups[i] == g
}

// applyAll installs the current filters in every running member.
func (b *backend) applyAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
	defer cancel()
	errs := make([]error, len(b.members))
	done := make(chan struct{})
	for i, m := range b.members {
		go func() {
			defer func() { done <- struct{}{} }()
			m.mu.Lock()
			defer m.mu.Unlock()
			if !m.running {
				return // the PostStarts hook applies it
			}
			if m.paused {
				errs[i] = fmt.Errorf("zktest/containers: zk%d is paused: cannot change its filters", i+1)
				return
			}
			errs[i] = b.applyRules(ctx, i, m.ctr, false)
		}()
	}
	for range b.members {
		<-done
	}
	return errors.Join(errs...)
}

// ruleset returns member i's iptables-restore input for the current state.
func (b *backend) ruleset(i int) string {
	b.pmu.Lock()
	defer b.pmu.Unlock()
	var s strings.Builder
	s.WriteString("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n")
	gw := b.gateway.String()
	if b.reject[i] {
		fmt.Fprintf(&s, "-A INPUT -s %s/32 -p tcp --dport %d -j REJECT --reject-with tcp-reset\n", gw, ClientPort)
		// The resets leave through OUTPUT: let them past a partition's DROP.
		fmt.Fprintf(&s, "-A OUTPUT -d %s/32 -p tcp --sport %d --tcp-flags RST RST -j ACCEPT\n", gw, ClientPort)
	}
	if b.groups != nil {
		mine := b.groups[i]
		var cut []string
		for j, m := range b.members {
			if j != i && b.groups[j] != mine {
				cut = append(cut, m.ip.String())
			}
		}
		if g, ok := b.groups[Host]; ok && g != mine {
			cut = append(cut, gw)
		}
		sort.Strings(cut)
		for _, ip := range cut {
			fmt.Fprintf(&s, "-A INPUT -s %s/32 -j DROP\n-A OUTPUT -d %s/32 -j DROP\n", ip, ip)
		}
	}
	s.WriteString("COMMIT\n")
	return s.String()
}

// applyRules installs member i's filters in container ctr. From the
// PostStarts hook (fresh network namespace) an empty ruleset is skipped.
func (b *backend) applyRules(ctx context.Context, i int, ctr testcontainers.Container, fromHook bool) error {
	rules := b.ruleset(i)
	if fromHook && !strings.Contains(rules, "-A ") {
		return nil
	}
	ectx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	code, out, err := ctr.Exec(ectx, []string{"bash", "-c", `printf '%s' "$1" | iptables-restore`, "_", rules}, tcexec.Multiplexed())
	if err != nil {
		return fmt.Errorf("zktest/containers: zk%d: iptables-restore: %w", i+1, err)
	}
	if code != 0 {
		return fmt.Errorf("zktest/containers: zk%d: iptables-restore exit %d: %s", i+1, code, strings.TrimSpace(readAll(out)))
	}
	return nil
}
