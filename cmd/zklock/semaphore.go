package main

import (
	"context"
	"flag"

	"github.com/zklock/zklock"
)

// semaphoreVerb is `zklock semaphore PATH --leases N [CMD]`.
var semaphoreVerb = &verb{name: "semaphore", args: "PATH --leases N [--] [CMD [ARG...]]", summary: "one of N leases (Curator InterProcessSemaphoreV2)",
	holds: true, recipe: semaphoreRecipe, check: checkLeases,
	flags: func(fs *flag.FlagSet, o *verbOpts) {
		fs.IntVar(&o.leases, "leases", 0, "the semaphore has `N` leases (required; all participants must agree)")
	},
	about: "Takes one of N leases of the semaphore at PATH (Curator's\n" +
		"InterProcessSemaphoreV2; N=1 is the wire format of InterProcessSemaphoreMutex).\n" +
		"The token is the lease node's czxid. N is stored in PATH's node (its data, as\n" +
		"kazoo stores max_leases; Curator ignores it): a participant with another N is\n" +
		"refused (exit 2) instead of admitting itself.\n" + lossHelpDefault,
	example: "zklock semaphore crawlers --leases 4 -- ./crawl"}

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
