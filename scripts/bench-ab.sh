#!/usr/bin/env bash
# make bench-ab OLD=<revision>: the working tree's locks against another revision's, the
# same workloads on both, interleaved, against one ZooKeeper server (fsync on).
# Prints per-repetition figures and one line per workload:
#   AB <workload> new/old <x.xx> (old's spread min/max ..., new's ...)
# A spread (slowest/fastest repetition of one revision) shows the run-to-run noise.
#   AB_REPS=5 (repetitions)  AB_SECONDS=3 (per workload, revision and repetition)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:?usage: scripts/bench-ab.sh <revision>}
GO=${GO:-go}
work="$root/.tmp/bench-ab"
rm -rf "$work"
mkdir -p "$work/old" "$work/run"
# The other revision as module github.com/zklock/zklockab (its nested modules left out).
git -C "$root" archive "$rev" | tar -x -C "$work/old"
rm -rf "$work/old/contrib" "$work/old/zktest/containers" "$work/old/reliability/containers" "$work/old/internal/release"
find "$work/old" -name '*.go' -o -name go.mod | xargs sed -i 's#github.com/zklock/zklock\b#github.com/zklock/zklockab#g'
sed '/^\/\/go:build ignore$/d' "$root/bench/ab/ab_test.go" >"$work/run/ab_test.go"
cat >"$work/run/go.mod" <<MOD
module zklockab/run

go 1.26

require (
	github.com/zklock/zklock v0.0.0
	github.com/zklock/zklockab v0.0.0
)

replace github.com/zklock/zklock => $root

replace github.com/zklock/zklockab => $work/old
MOD
cd "$work/run"
"$GO" mod tidy >/dev/null 2>&1 || "$GO" mod tidy
echo "bench-ab: $(git -C "$root" describe --always --dirty) (new) against $(git -C "$root" rev-parse --short "$rev") (old)"
"$GO" test -v -count=1 -timeout 60m -run '^TestAB$' . | grep -v -E '^(=== RUN|--- PASS|PASS$|ok )'
