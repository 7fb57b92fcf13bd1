#!/usr/bin/env bash
# make bench: zklock against Curator 5.4, kazoo 2.8, go-zookeeper's zk.Lock and
# the ZooKeeper floors. The suite starts its own servers (fsync on): a
# standalone server, measured directly and through a proxy adding 0.5 ms and
# 2 ms per round trip, and a 3-member ensemble. About eleven minutes on a
# 2-core machine.
#   scripts/bench.sh                 the suite; raw numbers in .tmp/bench.json,
#                                    the charts in .tmp/bench.html beside it
#   BENCH_JSON=path scripts/bench.sh write them elsewhere (the page: same name, .html)
#   BENCH_CPUPROFILE=path            also write a Go CPU profile of the run
# Prints progress, the tables, the goals, and ends with one line per ratio:
#   RATIO <workload> zklock/<peer> <x.xx>
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
GO=${GO:-go}
json=${BENCH_JSON:-$root/.tmp/bench.json}
mkdir -p "$root/.tmp"
bin="$root/.tmp/bench.test"
start=$(date +%s)

"$GO" test -c -o "$bin" ./bench
args=(-test.run '^TestBench$' -test.count 1 -test.timeout 30m -bench.full -bench.json "$json")
if [[ -n "${BENCH_CPUPROFILE:-}" ]]; then
	args+=(-test.cpuprofile "$BENCH_CPUPROFILE")
fi
cd "$root/bench"
"$bin" "${args[@]}" | grep -v -E '^(=== RUN|--- PASS|PASS$)'
echo "raw numbers: $json" >&2
echo "report: ${json%.json}.html" >&2
echo "make bench took $(( $(date +%s) - start )) s" >&2
