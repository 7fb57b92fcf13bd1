package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLossLimit(t *testing.T) {
	cases := []struct {
		args    []string
		env     map[string]string
		set     bool
		limit   time.Duration
		problem string // a usage error mentioning this
	}{
		{args: []string{"lock", "x"}},
		{args: []string{"semaphore", "x", "--leases", "2"}},
		{args: []string{"elect", "x"}, set: true, limit: 0},
		{args: []string{"elect", "x", "--loss-limit", "2s"}, set: true, limit: 2 * time.Second},
		{args: []string{"--loss-limit=-1s", "elect", "x"}, set: true, limit: -time.Second},
		{args: []string{"lock", "x"}, env: map[string]string{"ZKLOCK_LOSS_LIMIT": "0"}, set: true, limit: 0},
		{args: []string{"read", "x", "--loss-limit", "3s"}, env: map[string]string{"ZKLOCK_LOSS_LIMIT": "0"}, set: true, limit: 3 * time.Second},
		{args: []string{"elect", "x"}, env: map[string]string{"ZKLOCK_LOSS_LIMIT": ""}, set: true, limit: 0},
		{args: []string{"lock", "x", "--loss-limit", "soon"}, problem: "--loss-limit"},
		{args: []string{"lock", "x"}, env: map[string]string{"ZKLOCK_LOSS_LIMIT": "1"}, problem: "ZKLOCK_LOSS_LIMIT"},
	}
	for _, tc := range cases {
		inv, err := parseArgs(tc.args, envMap(tc.env))
		if tc.problem != "" {
			assertUsage(t, err, tc.problem)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.set, inv.cfg.lossSet, "%v %v", tc.args, tc.env)
		assert.Equal(t, tc.limit, inv.cfg.lossLimit, "%v %v", tc.args, tc.env)
	}
}
