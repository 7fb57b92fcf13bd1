package lockview_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/cmd/zklock/internal/lockview"
	"github.com/zklock/zklock/zktest"
)

// Every session shown has its client address, from the members' cons;
// the ensemble's health comes from their srvr, with the view's own member
// marked. A member that refuses cons is said so once, with how to allow
// it, and the participant's data stays the id shown.
func TestIntegration_Clients(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []zktest.Option
		allowed bool
	}{
		{"cons allowed", nil, true},
		{"cons refused", []zktest.Option{zktest.WithSystemProperty("zookeeper.4lw.commands.whitelist", "srvr,ruok")}, false},
		{"over TLS", []zktest.Option{zktest.WithTLSClientAuth()}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := zktest.Start(t, tc.opts...)
			s := connect(t, c)
			m, err := zklock.NewMutex(s, "/locks/web/job", zklock.WithData([]byte("worker-7")))
			require.NoError(t, err)
			hold(t, m)
			cfg := lockview.Config{Root: "/locks", Members: c.Servers(), PollEvery: time.Hour}
			if c.TLS() != nil {
				cfg.TLS = c.TLS().ClientConfig()
			}
			v := newView(t, connect(t, c), cfg)
			srv := serve(t, v, false)
			var o lockview.Overview
			require.Eventually(t, func() bool {
				o = v.Overview("")
				return len(o.Locks) == 1 && len(o.Ensemble) == 1 && (o.Locks[0].Holders[0].Client != nil) == tc.allowed && (o.ClientsNote == "") == tc.allowed
			}, 20*time.Second, 10*time.Millisecond, "%+v", o)
			require.Equal(t, "standalone", o.Ensemble[0].Mode)
			require.True(t, o.Ensemble[0].Own)
			require.Equal(t, c.Servers()[0], o.Ensemble[0].Addr)
			_, page := get(t, srv.URL+"/lock/locks/web/job")
			require.Contains(t, page, "worker-7")
			require.Contains(t, page, `<table class="ensemble">`)
			if !tc.allowed {
				require.Contains(t, o.ClientsNote, "4lw.commands.whitelist=cons,srvr,mntr")
				require.Equal(t, 1, strings.Count(page, "refuses the four-letter word cons"), "said once")
				return
			}
			cl := o.Locks[0].Holders[0].Client
			require.Regexp(t, regexp.MustCompile(`^127\.0\.0\.1:\d+$`), cl.Addr)
			require.Equal(t, c.Servers()[0], cl.Member)
			require.Contains(t, page, cl.Addr)
		})
	}
}
