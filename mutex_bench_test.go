package zklock_test

import (
	"context"
	"testing"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// BenchmarkMutexUncontended measures one acquire+release cycle of an
// uncontended lock: create with the listing pipelined behind it (the token
// comes with the create's reply), then delete; three requests in two round
// trips (a hold released this fast sends no watch on its own node). make bench compares it with Curator and the ZooKeeper floor.
func BenchmarkMutexUncontended(b *testing.B) {
	c := zktest.Start(b, zktest.WithFsync(true))
	s := connect(b, c)
	m, err := zklock.NewMutex(s, "/locks/bench")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		h, err := m.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Release(); err != nil {
			b.Fatal(err)
		}
	}
}
