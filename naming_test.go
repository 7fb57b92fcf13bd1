package zklock

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseContender(t *testing.T) {
	const uuid = "_c_bd9ce43b-a537-4e53-acde-609e6d52dbef-"
	tests := []struct {
		name string
		ok   bool
		kind Kind
		seq  int32
		read bool
	}{
		{uuid + "lock-0000000000", true, KindLock, 0, false},
		{uuid + "lock-0000000031", true, KindLock, 31, false},
		{uuid + "lock-2147483647", true, KindLock, 2147483647, false},
		{uuid + "lock--2147483648", true, KindLock, -2147483648, false},
		{uuid + "lock--000000001", true, KindLock, -1, false},
		{uuid + "__READ__0000000007", true, KindRead, 7, true},
		{uuid + "__WRIT__0000000008", true, KindWrite, 8, false},
		{uuid + "lease-0000000009", true, KindLease, 9, false},
		{uuid + "latch-0000000010", true, KindLatch, 10, false},
		{"c591f1941aa04da98d2b3e5c4e6c324d__lock__0000000012", true, KindForeign, 12, false},
		{"c591f1941aa04da98d2b3e5c4e6c324d__rlock__0000000013", true, KindForeign, 13, true},
		{"_c_8eb60557ba51e0da67eefc47467d3f34-lock-0000000031", true, KindLock, 31, false}, // go-zookeeper
		{"lock-lock-0000000005", true, KindLock, 5, false},
		{"leases", false, "", 0, false},
		{"locks", false, "", 0, false},
		{uuid + "lock-000000001", false, "", 0, false},   // 9 digits without a sign
		{uuid + "lock-00000000001", false, "", 0, false}, // 11 digits
		{uuid + "lock-2147483648", false, "", 0, false},  // out of int32 range
		{uuid + "lock-00000000x1", false, "", 0, false},
		{"", false, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := parseContender(tt.name)
			require.Equal(t, tt.ok, ok)
			if ok {
				assert.Equal(t, tt.kind, c.kind)
				assert.Equal(t, tt.seq, c.seq)
				assert.Equal(t, tt.read, c.read)
			}
		})
	}
}

func TestSortContendersAcrossWrap(t *testing.T) {
	names := []string{
		"_c_a-lock--2147483648", // wrapped: created after 2147483647
		"_c_b-lock-2147483646",
		"x__lock__2147483647", // kazoo
		"_c_c-lock--2147483647",
		"leases", // not a contender
	}
	cs := sortContenders(names)
	var got []string
	for _, c := range cs {
		got = append(got, c.name)
	}
	require.Equal(t, []string{"_c_b-lock-2147483646", "x__lock__2147483647", "_c_a-lock--2147483648", "_c_c-lock--2147483647"}, got)

	// The holder is the oldest node, and the wrapped node watches its real
	// predecessor instead of jumping the queue.
	holds, _ := exclusive(cs, 0)
	require.True(t, holds)
	holds, w := exclusive(cs, 2)
	require.False(t, holds)
	require.Equal(t, "x__lock__2147483647", cs[w].name)
}

func TestSortContendersEqualSequences(t *testing.T) {
	// A Curator 5.5 downgrade: the read node reuses its write node's sequence.
	cs := sortContenders([]string{"_c_w2-__WRIT__0000000005", "_c_r-__READ__0000000004", "_c_w-__WRIT__0000000004"})
	require.Len(t, cs, 3)
	require.Equal(t, int32(4), cs[0].seq)
	require.Equal(t, int32(4), cs[1].seq)
	require.Equal(t, "_c_w2-__WRIT__0000000005", cs[2].name)
}

func TestSeqCompare(t *testing.T) {
	tests := []struct {
		a, b int32
		want int
	}{
		{1, 2, -1}, {2, 1, 1}, {5, 5, 0},
		{2147483647, -2147483648, -1},
		{-2147483648, 2147483647, 1},
		{-1, 0, -1},
		{2147483000, -2147483000, -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, seqCompare(tt.a, tt.b), "%d vs %d", tt.a, tt.b)
	}
}

func TestProtectedPrefix(t *testing.T) {
	re := regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-$`)
	seen := map[string]bool{}
	for range 100 {
		p := protectedPrefix()
		require.Len(t, p, 40)
		require.Regexp(t, re, p)
		require.False(t, seen[p])
		seen[p] = true
	}
}

func TestValidatePath(t *testing.T) {
	for _, p := range []string{"/a", "/locks/a", "/locks/a-b_c.d", "/a/.b", "/a/..b", "/a/b.", "/zookeeperx",
		"/locks/caf\u00e9", "/" + strings.Repeat("a", maxPath-1)} {
		require.NoError(t, ValidatePath(p), p)
		require.Empty(t, javaValidatePath(p), p)
	}
	for _, p := range []string{"", "/", "a", "locks/a", "/a/", "//a", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..",
		"/a\x00b", "/a\x01b", "/a\x7fb", "/a\u0085b", "/a\ue000b", "/a\ufff0b", "/a\U0001F512", "/a\xffb",
		"/zookeeper", "/zookeeper/quota", "/" + strings.Repeat("a", maxPath), "/" + strings.Repeat("a", 1<<20)} {
		err := ValidatePath(p)
		require.ErrorIs(t, err, ErrInvalidPath, "%q", p)
		require.ErrorIs(t, err, ErrInvalidArgument, "%q", p)
		require.Less(t, len(err.Error()), 200, "the message quotes a long path in part only")
	}
}

func TestBackoffSchedule(t *testing.T) {
	b := Backoff{Base: 50 * time.Millisecond, Max: 2 * time.Second}
	want := []time.Duration{50, 100, 200, 400, 800, 1600, 2000, 2000}
	for i, w := range want {
		require.Equal(t, w*time.Millisecond, b.Ceiling(i), "attempt %d", i)
	}
	require.Equal(t, 2*time.Second, b.Ceiling(1000), "no overflow on long outages")
	r := rand.New(rand.NewPCG(1, 2))
	distinct := map[time.Duration]bool{}
	for i := range 200 {
		d := b.Delay(i%8, r)
		require.GreaterOrEqual(t, d, time.Duration(0))
		require.LessOrEqual(t, d, b.Ceiling(i%8))
		distinct[d] = true
	}
	require.Greater(t, len(distinct), 150, "delays are jittered")
	require.Zero(t, Backoff{}.Delay(3, r))
}
