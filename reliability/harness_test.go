package reliability

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSeqOf: the nemesis picks the holder as the lowest sequence, so the
// dash before a lock's digits must not read as a minus sign.
func TestSeqOf(t *testing.T) {
	for name, want := range map[string]int64{
		"_c_09815df8-0b36-4427-bef0-b6b05709d068-lock-0000000004":    4,
		"_c_09815df8-0b36-4427-bef0-b6b05709d068-lock-0000000012":    12,
		"_c_09815df8-0b36-4427-bef0-b6b05709d068-__READ__0000000007": 7,
		"_c_09815df8-0b36-4427-bef0-b6b05709d068-lock--2147483648":   -2147483648,
		"lease-0000000003": 3,
		"nosequence":       0,
	} {
		if got := seqOf(name); got != want {
			t.Errorf("seqOf(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestEphemeralsUnder(t *testing.T) {
	dump := "SessionTracker dump:\nGlobal Sessions(1):\n0x1\t10000ms\nephemeral nodes dump:\nSessions with Ephemerals (2):\n0x1:\n\t/r/S1/lock-0/_c_x-lock-0000000001\n\t/other/e\n0x2:\n\t/r/S1/lock-1/n\nConnections dump:\n\tip: /r/S1/not-a-node\n"
	require.Equal(t, []string{"/r/S1/lock-0/_c_x-lock-0000000001", "/r/S1/lock-1/n"}, ephemeralsUnder(dump, "/r/S1/"))
}
