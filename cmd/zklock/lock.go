package main

// zklock lock: the reentrant mutex.

import "github.com/zklock/zklock"

// lockVerb is `zklock lock PATH [CMD]`.
var lockVerb = &verb{name: "lock", args: "PATH [--] [CMD [ARG...]]", summary: "exclusive: the reentrant mutex (Curator InterProcessMutex)",
	holds: true, recipe: lockRecipe,
	about: "Takes the exclusive lock at PATH (Curator's InterProcessMutex recipe: it\n" +
		"excludes a Curator InterProcessMutex, a Go zklock.Mutex and kazoo's Lock with\n" +
		"extra_lock_patterns on the same path), runs CMD while holding it, then releases.\n" +
		lossHelpDefault,
	example: "zklock lock nightly-backup -- ./backup.sh\n" +
		"zklock lock nightly-backup --id \"$(hostname)\" -c 'pg_dump app > /backup/app.sql'\n" +
		"zklock --timeout 30s lock /locks/report --try -- ./report.sh"}

func lockRecipe(s *zklock.Session, path string, o *verbOpts) (acquireFunc, endFunc, error) {
	return acquireOf(zklock.NewMutex(s, path, o.lockOptions()...))
}
