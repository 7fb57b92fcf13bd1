// Command lockpath runs one uncontended Mutex.Lock and Release against the
// ZooKeeper server named by its first argument and writes the coverage
// counters just before and just after it, into the folders before and
// after under its second argument. It is built with -cover by
// TestIntegration_LockPathFiles, which compares the two.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/coverage"

	"github.com/zklock/zklock"
)

func main() {
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "lockpath:", err)
		os.Exit(1)
	}
}

func run(server, dir string) error {
	s, err := zklock.Connect([]string{server})
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.WaitConnected(ctx); err != nil {
		return err
	}
	m, err := zklock.NewMutex(s, "/locks/lockpath")
	if err != nil {
		return err
	}
	cycle := func() error {
		h, err := m.Lock(ctx)
		if err != nil {
			return err
		}
		return h.Release()
	}
	for range 3 { // the path exists, the session's first requests are done
		if err := cycle(); err != nil {
			return err
		}
	}
	snap := func(name string) error {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := coverage.WriteMetaDir(d); err != nil {
			return err
		}
		return coverage.WriteCountersDir(d)
	}
	if err := snap("before"); err != nil {
		return err
	}
	if err := cycle(); err != nil {
		return err
	}
	return snap("after")
}
