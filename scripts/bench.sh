#!/usr/bin/env bash
# make bench: zklock against Curator 5.4, kazoo 2.8, go-zookeeper's zk.Lock and
# the ZooKeeper floors, on one ZooKeeper server (standalone, fsync on) that the
# suite starts itself. About six minutes on a 2-core machine.
#   scripts/bench.sh                 the suite; raw numbers in .tmp/bench.json
#   BENCH_JSON=path scripts/bench.sh write them elsewhere
#   BENCH_CPUPROFILE=path            also write a Go CPU profile of the run
# Prints progress, the tables, the goals, and ends with the four ratio lines.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
json=${BENCH_JSON:-$root/.tmp/bench.json}
mkdir -p "$root/.tmp"
bin="$root/.tmp/bench.test"

"$GO" test -c -o "$bin" ./bench
args=(-test.run '^TestBench$' -test.count 1 -test.timeout 30m -bench.full -bench.json "$json")
if [[ -n "${BENCH_CPUPROFILE:-}" ]]; then
	args+=(-test.cpuprofile "$BENCH_CPUPROFILE")
fi
cd "$root/bench"
"$bin" "${args[@]}" | grep -v -E '^(=== RUN|--- PASS|PASS$)'
echo "raw numbers: $json" >&2
