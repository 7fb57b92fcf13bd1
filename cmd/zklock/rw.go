package main

// The read and write verbs: the two halves of Curator's
// InterProcessReadWriteLock.

import "github.com/zklock/zklock"

// readVerb is `zklock read PATH`: the shared half of the read-write lock.
var readVerb = &verb{
	name: "read", args: "PATH [--] [CMD [ARG...]]", summary: "shared half of the read-write lock (Curator __READ__)",
	holds: true, recipe: rwRecipe((*zklock.RWLock).ReadLock),
	about: "Takes the shared (read) half of the read-write lock at PATH (Curator's\n" +
		"InterProcessReadWriteLock, __READ__ nodes): readers run together, a writer\n" +
		"excludes them all.\n" + lossHelpDefault,
	example: "zklock read /locks/schema -- ./query.sh",
}

// writeVerb is `zklock write PATH`: the exclusive half of the read-write
// lock.
var writeVerb = &verb{
	name: "write", args: "PATH [--] [CMD [ARG...]]", summary: "exclusive half of the read-write lock (Curator __WRIT__)",
	holds: true, recipe: rwRecipe((*zklock.RWLock).WriteLock),
	about: "Takes the exclusive (write) half of the read-write lock at PATH (Curator's\n" +
		"InterProcessReadWriteLock, __WRIT__ nodes).\n" + lossHelpDefault,
	example: "zklock --timeout 30s write /locks/schema -- ./migrate",
}

// rwRecipe is the recipe of one half of the read-write lock.
func rwRecipe(half func(*zklock.RWLock) *zklock.RWHalf) recipe {
	return func(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
		rw, err := zklock.NewRWLock(s, path, o.lockOptions()...)
		if err != nil {
			return nil, nil, err
		}
		return acquireOf(half(rw), nil)
	}
}
