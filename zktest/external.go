package zktest

import (
	"context"
	"net"
	"strings"
	"testing"
)

// startExternal returns a Cluster over the ensemble listed in ZK_SERVERS.
// The harness does not own those servers: fault controls return
// ErrUnsupported, and tests share the ensemble's data, so they should use
// paths of their own (for example one derived from t.Name()).
func startExternal(t testing.TB, cfg config, list string) *Cluster {
	t.Helper()
	var servers []string
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(s, "2181")
		}
		servers = append(servers, s)
	}
	if len(servers) == 0 {
		t.Fatalf("zktest: %s=%q lists no server", EnvServers, list)
	}
	c := &Cluster{cfg: cfg, servers: servers, book: newSessionBook(), backend: "external"}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.startTimeout)
	defer cancel()
	if err := c.WaitServing(ctx); err != nil {
		t.Fatalf("zktest: %s=%s: %v", EnvServers, list, err)
	}
	c.logVersion(t)
	return c
}
