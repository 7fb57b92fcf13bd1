// Package debcache names the directory into which scripts/fetch-newer.sh
// unpacks Debian's newer packages (ZooKeeper 3.9, Curator 5, kazoo 2)
// beside bookworm's: zktest's local backend runs its ZooKeeper from there,
// and the interop peers load their Curator and kazoo from there.
package debcache

import "os"

// Env ("ZKLOCK_CACHE") names the directory in place of Default.
const Env = "ZKLOCK_CACHE"

// Default is where scripts/fetch-newer.sh unpacks unless Env says otherwise.
const Default = "/var/cache/zklock"

// Dir returns $ZKLOCK_CACHE, or Default when it is unset or empty.
func Dir() string {
	if d := os.Getenv(Env); d != "" {
		return d
	}
	return Default
}
