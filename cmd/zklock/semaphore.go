package main

import (
	"context"

	"github.com/zklock/zklock"
)

// semaphoreRecipe is `zklock semaphore PATH --leases N`: one lease of a
// Curator InterProcessSemaphoreV2 of N leases (with N = 1, the wire format of
// Curator's InterProcessSemaphoreMutex). The token is the lease node's czxid.
func semaphoreRecipe(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
	return acquireOf(newLeaseLocker(zklock.NewSemaphore(s, path, o.leases, o.lockOptions()...)))
}

// checkLeases refuses a missing or non-positive --leases before connecting.
func checkLeases(o *verbOpts) error {
	if o.leases < 1 {
		return usagef("semaphore: --leases N is required, with N at least 1")
	}
	return nil
}

// leaseLocker gives a Semaphore the Lock/TryLock shape of the other recipes.
type leaseLocker struct{ sem *zklock.Semaphore }

func newLeaseLocker(sem *zklock.Semaphore, err error) (leaseLocker, error) {
	return leaseLocker{sem}, err
}

func (l leaseLocker) Lock(ctx context.Context) (*zklock.Hold, error)    { return l.sem.Acquire(ctx) }
func (l leaseLocker) TryLock(ctx context.Context) (*zklock.Hold, error) { return l.sem.TryAcquire(ctx) }
