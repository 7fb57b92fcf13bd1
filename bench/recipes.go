package bench

import (
	"context"

	"github.com/zklock/zklock"
)

// The zklock recipes besides Mutex that have a Curator counterpart here.
func init() {
	extraZklock = []goLib{
		zklockLib("zklock-rwwrite", func(s *zklock.Session, path string) (func(context.Context) (*zklock.Hold, error), error) {
			rw, err := zklock.NewRWLock(s, path)
			if err != nil {
				return nil, err
			}
			return rw.WriteLock().Lock, nil
		}),
		zklockLib("zklock-semmutex", func(s *zklock.Session, path string) (func(context.Context) (*zklock.Hold, error), error) {
			m, err := zklock.NewSemaphoreMutex(s, path)
			if err != nil {
				return nil, err
			}
			return m.Lock, nil
		}),
	}
}
