#!/usr/bin/env bash
# make bench: zklock against Curator and kazoo (internal/peers' Newest:
# Debian's newest Curator 5 on the ZooKeeper 3.9 client, kazoo 2),
# go-zookeeper's zk.Lock and the ZooKeeper floors. The suite starts its own
# servers (fsync on) of the release ZKTEST_ZK_VERSION selects (3.9, the
# default, or 3.8): a standalone server, measured directly and through a
# proxy adding 0.5 ms and 2 ms per round trip, a 3-member ensemble, and the
# failover phase's ensemble with a short tick; and, for the release
# comparison, one standalone server of each release (3.9 and 3.8) that
# zklock's mutex runs on in every repetition. About seventeen minutes on a
# 2-core machine (the failover phase about seven). The first line names the
# server release; the report's first line names every release that ran.
#   scripts/bench.sh                 the suite; raw numbers in .tmp/bench.json,
#                                    the charts in .tmp/bench.html beside it; the
#                                    run before is kept as .tmp/bench.prev.json, and
#                                    the intervals' honesty goal is judged against it
#   BENCH_JSON=path scripts/bench.sh write them elsewhere (the page: same name, .html)
#   BENCH_SIZE=full                  make bench-full: 10 longer repetitions, 60
#                                    failover events per case (about 25 minutes)
#   BENCH_CPUPROFILE=path            also write a Go CPU profile of the run
#   BENCH_PHASE=failover             the failover phase alone (about seven minutes):
#                                    its table, goals and FAILOVER lines
#   BENCH_PHASE=crowd                the crowd alone (run after the suite otherwise): a
#                                    leader latch of 1,000 candidates against 3
# Prints progress, the tables, the goals, and ends with one line per ratio
# and one per failover case, recipe and loss limit:
#   RATIO <workload> zklock/<peer> <x.xx> [<lo>, <hi>]
#   RATIO <workload> zk3.9/zk3.8 <x.xx> [<lo>, <hi>]   (the release comparison)
#   FAILOVER <case> <recipe> p50=<ms> p99=<ms> changes=<n> events=<n> [loss=<limit>] [session=4s]
# (recipe zookeeper-election at leader-kill: the ensemble itself, from the kill
# until a member serves again)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# shellcheck source=scripts/zk-lib.sh
. "$root/scripts/zk-lib.sh"
zk=$(zk_release) || exit 2
echo "make bench: ZooKeeper $zk (ZKTEST_ZK_VERSION=${ZKTEST_ZK_VERSION:-3.9}); the release comparison runs zklock on 3.9 and 3.8"
GO=${GO:-go}
json=${BENCH_JSON:-$root/.tmp/bench.json}
mkdir -p "$root/.tmp"
bin="$root/.tmp/bench.test"
start=$(date +%s)

"$GO" test -c -o "$bin" ./bench
# The code measured: the commit, and a digest of any uncommitted change.
rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then
	rev="$rev+$(git diff HEAD | sha256sum | cut -c1-12)"
fi
prev="${json%.json}.prev.json"
if [[ -f "$json" ]]; then
	mv "$json" "$prev"
fi
args=(-test.run '^TestBench$' -test.count 1 -test.timeout 60m -bench.full -bench.json "$json"
	-bench.size "${BENCH_SIZE:-default}" -bench.rev "$rev" -bench.prev "$prev" -bench.phase "${BENCH_PHASE:-}")
if [[ -n "${BENCH_CPUPROFILE:-}" ]]; then
	args+=(-test.cpuprofile "$BENCH_CPUPROFILE")
fi
cd "$root/bench"
"$bin" "${args[@]}" | grep -v -E '^(=== RUN|--- PASS|PASS$)'
if [[ -z "${BENCH_PHASE:-}" ]]; then
	# The crowd: a leader latch of 1,000 candidates against 3, zklock and
	# Curator, on a server of its own (a few minutes; its lines: CROWD,
	# RATIO crowd-..., CHECK crowd requests/handover O(1) ...: ok|FAIL).
	"$bin" -test.run '^TestBench$' -test.count 1 -test.timeout 30m -bench.full -bench.phase crowd |
		grep -v -E '^(=== RUN|--- PASS|PASS$)'
fi
echo "raw numbers: $json" >&2
echo "report: ${json%.json}.html" >&2
echo "make bench took $(( $(date +%s) - start )) s" >&2
