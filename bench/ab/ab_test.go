//go:build ignore

// This file is not built in place: scripts/bench-ab.sh copies it, without
// the build line above, into a scratch module that requires both the
// working tree (github.com/zklock/zklock) and another revision of it,
// renamed github.com/zklock/zklockab. It runs the same workloads on both,
// interleaved, against one ZooKeeper server.

package ab

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
	old "github.com/zklock/zklockab"
)

// lib is one revision of the library, as the workloads use it.
type lib struct {
	name    string
	connect func(servers []string) (closer, error)
}

type closer interface{ Close() error }

type hold interface{ Release() error }

// locker makes a lock on path of the given kind on session s.
type locker func(s closer, kind, path string) (func(context.Context) (hold, error), error)

func libs() ([]lib, map[string]locker) {
	nw := lib{"new", func(servers []string) (closer, error) { return zklock.Connect(servers) }}
	ol := lib{"old", func(servers []string) (closer, error) { return old.Connect(servers) }}
	lockers := map[string]locker{
		"new": func(s closer, kind, path string) (func(context.Context) (hold, error), error) {
			if kind == "semaphore-mutex" {
				m, err := zklock.NewSemaphoreMutex(s.(*zklock.Session), path)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context) (hold, error) { return m.Lock(ctx) }, nil
			}
			m, err := zklock.NewMutex(s.(*zklock.Session), path)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (hold, error) { return m.Lock(ctx) }, nil
		},
		"old": func(s closer, kind, path string) (func(context.Context) (hold, error), error) {
			if kind == "semaphore-mutex" {
				m, err := old.NewSemaphoreMutex(s.(*old.Session), path)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context) (hold, error) { return m.Lock(ctx) }, nil
			}
			m, err := old.NewMutex(s.(*old.Session), path)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) (hold, error) { return m.Lock(ctx) }, nil
		},
	}
	return []lib{ol, nw}, lockers
}

// workload runs sessions x goroutines acquiring and releasing one lock for
// d and returns acquisitions per second.
type workload struct {
	name                 string
	kind                 string
	sessions, goroutines int
}

func run(l lib, lk locker, w workload, servers []string, path string, d time.Duration) (float64, error) {
	var ss []closer
	defer func() {
		for _, s := range ss {
			s.Close()
		}
	}()
	var lockFns []func(context.Context) (hold, error)
	for range w.sessions {
		s, err := l.connect(servers)
		if err != nil {
			return 0, err
		}
		ss = append(ss, s)
		for range w.goroutines {
			f, err := lk(s, w.kind, path)
			if err != nil {
				return 0, err
			}
			lockFns = append(lockFns, f)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	var n atomic.Int64
	var (
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for _, f := range lockFns {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				h, err := f(ctx)
				if err != nil {
					fail(err)
					return
				}
				n.Add(1)
				if err := h.Release(); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	stopAfter := time.AfterFunc(d, func() { close(stop) }) // the workload's length, not a synchronisation
	wg.Wait()
	stopAfter.Stop()
	elapsed := time.Since(start)
	if first != nil {
		return 0, first
	}
	return float64(n.Load()) / elapsed.Seconds(), nil
}

func TestAB(t *testing.T) {
	reps, _ := strconv.Atoi(os.Getenv("AB_REPS"))
	if reps <= 0 {
		reps = 5
	}
	d := 3 * time.Second
	if v := os.Getenv("AB_SECONDS"); v != "" {
		s, _ := strconv.ParseFloat(v, 64)
		d = time.Duration(s * float64(time.Second))
	}
	c := zktest.Start(t, zktest.WithFsync(true))
	ls, lockers := libs()
	ws := []workload{
		{"uncontended", "mutex", 1, 1},
		{"contended", "mutex", 8, 1},
		{"inprocess", "mutex", 1, 64},
		{"semaphore-mutex-uncontended", "semaphore-mutex", 1, 1},
		{"semaphore-mutex-contended", "semaphore-mutex", 8, 1},
	}
	res := map[string]map[string][]float64{}
	for _, w := range ws {
		res[w.name] = map[string][]float64{}
	}
	for rep := range reps {
		for wi, w := range ws {
			order := slices.Clone(ls)
			if rand.IntN(2) == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, l := range order {
				path := fmt.Sprintf("/ab/%s/%s/%d-%d", l.name, w.name, rep, wi)
				v, err := run(l, lockers[l.name], w, c.Servers(), path, d)
				if err != nil {
					t.Fatalf("%s %s: %v", l.name, w.name, err)
				}
				res[w.name][l.name] = append(res[w.name][l.name], v)
			}
		}
	}
	fmt.Printf("%-30s %-6s %10s   %s\n", "workload", "rev", "median/s", "repetitions (acquisitions/s)")
	for _, w := range ws {
		for _, l := range ls {
			vs := res[w.name][l.name]
			fmt.Printf("%-30s %-6s %10.1f   %v\n", w.name, l.name, median(vs), rounded(vs))
		}
		o, n := res[w.name]["old"], res[w.name]["new"]
		fmt.Printf("AB %s new/old %.2f (old's spread min/max %.2f, new's %.2f)\n", w.name, median(n)/median(o), spread(o), spread(n))
	}
}

func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	return s[len(s)/2]
}

func spread(vs []float64) float64 { return slices.Min(vs) / slices.Max(vs) }

func rounded(vs []float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		out[i] = float64(int(v*10)) / 10
	}
	return out
}
