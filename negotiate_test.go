package zklock_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/proc"
	"github.com/zklock/zklock/zktest"
)

// A session timeout the server clips into its range (zktest's: 2 ticks,
// 200ms, to 60s) is reported: SessionTimeout returns the granted one, and
// the session logs both at Warn level, naming the bound.
func TestIntegration_NegotiatedSessionTimeoutReported(t *testing.T) {
	c := zktest.Start(t)
	for _, tc := range []struct {
		asked, granted time.Duration
		bound          string
	}{
		{zklock.MinSessionTimeout, 200 * time.Millisecond, "minSessionTimeout"},
		{10 * time.Minute, time.Minute, "maxSessionTimeout"},
		{4 * time.Second, 4 * time.Second, ""},
	} {
		var log proc.Buffer
		s, err := zklock.Connect(c.Servers(), zklock.WithSessionTimeout(tc.asked),
			zklock.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))))
		require.NoError(t, err)
		require.NoError(t, s.WaitConnected(ctxTimeout(t, 20*time.Second)))
		require.Equal(t, tc.granted, s.SessionTimeout(), "asked %v", tc.asked)
		require.NoError(t, s.Close())
		if tc.bound == "" {
			require.NotContains(t, log.String(), "negotiated", "asked %v", tc.asked)
			continue
		}
		require.Contains(t, log.String(), "negotiated another session timeout (its "+tc.bound+")")
		require.Contains(t, log.String(), "asked="+tc.asked.String())
		require.Contains(t, log.String(), "granted="+tc.granted.String())
	}
}
