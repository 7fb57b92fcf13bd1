package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStoreFencingRule(t *testing.T) {
	var s Store
	require.True(t, s.Write("a", 10, "x").Accepted)
	require.True(t, s.Write("a", 10, "y").Accepted, "the same token writes again")
	require.True(t, s.Write("b", 12, "z").Accepted)
	res := s.Write("a", 10, "stale")
	require.False(t, res.Accepted, "a lower token is refused")
	require.Equal(t, int64(12), res.Highest)
	require.Contains(t, s.String(), `value="z"`)
}

func TestStoreConcurrentWritesNeverRegress(t *testing.T) {
	var s Store
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for tok := int64(0); tok < 200; tok++ {
				s.Write("w", tok*8+int64(w), "v")
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(199*8+7), s.Write("check", 0, "").Highest)
}

func TestHandler(t *testing.T) {
	var out bytes.Buffer
	srv := httptest.NewServer(handler(&Store{}, &out))
	defer srv.Close()
	post := func(q string) int {
		resp, err := http.Post(srv.URL+"/write?"+q, "text/plain", nil)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, post("writer=a&token=5&value=1"))
	require.Equal(t, http.StatusConflict, post("writer=b&token=4&value=2"))
	require.Equal(t, http.StatusBadRequest, post("writer=b&token=x"))
	require.Equal(t, http.StatusBadRequest, post("token=6"))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], "[store] ACCEPT a token=5")
	require.Contains(t, lines[1], "[store] REJECT b token=4")
	srv.CloseClientConnections()
}
