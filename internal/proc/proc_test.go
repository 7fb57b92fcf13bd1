package proc

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTail(t *testing.T) {
	tl := NewTail(8)
	require.Empty(t, tl.String())
	n, err := tl.Write([]byte("abc"))
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, "abc", tl.String())
	var all strings.Builder
	all.WriteString("abc")
	for i := range 40 {
		s := strings.Repeat(string(rune('a'+i%26)), i%5+1)
		_, _ = tl.Write([]byte(s))
		all.WriteString(s)
		want := all.String()
		want = want[max(len(want)-8, 0):]
		require.Equal(t, want, tl.String(), "after write %d", i)
		require.LessOrEqual(t, len(tl.b), 16)
	}
}

func TestTailConcurrent(t *testing.T) {
	tl := NewTail(64)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = tl.Write([]byte("0123456789"))
				_ = tl.String()
			}
		})
	}
	wg.Wait()
	require.Len(t, tl.String(), 64)
}

func TestWait(t *testing.T) {
	done := make(chan struct{})
	require.False(t, Wait(done, time.Millisecond))
	close(done)
	require.True(t, Wait(done, time.Hour))
}
