package reliability

import "testing"

func TestSyncedFollowers(t *testing.T) {
	for _, tc := range []struct {
		mntr string
		want int
	}{
		{"zk_version\t3.8.0\nzk_server_state\tleader\nzk_synced_followers\t2\nzk_pending_syncs\t0\n", 2},
		{"zk_server_state\tleader\r\nzk_synced_followers\t1\r\n", 1},
		{"zk_server_state\tfollower\n", -1},
		{"zk_synced_followers\tx\n", -1},
		{"", -1},
	} {
		if got := syncedFollowers(tc.mntr); got != tc.want {
			t.Errorf("syncedFollowers(%q) = %d, want %d", tc.mntr, got, tc.want)
		}
	}
}
