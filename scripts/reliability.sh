#!/usr/bin/env bash
# The fault-injection suite (reliability/; see docs/reliability.md), on the
# ZooKeeper release ZKTEST_ZK_VERSION selects (3.9, the default, or 3.8 for
# bookworm's 3.8.0), which its first line names.
#   scripts/reliability.sh short     make reliability: every scenario at short durations (<= 10 min)
#   scripts/reliability.sh soak      make soak: the plan's durations
#   scripts/reliability.sh negative  make reliability-negative: the broken variants N1-N9
#   scripts/reliability.sh containers       make reliability-containers: S18-S20 on an ensemble in
#                                           containers (reliability/containers), then N3 under S18
#   scripts/reliability.sh containers-soak  the same at the plan's durations (run by the soak)
# RELIABILITY_OUT=dir keeps the table, report.json, the histories and their HTML timelines
# (dir/index.html links them) there (default: a fresh temporary directory, printed).
# RELIABILITY_ONLY=S5,S7 runs only those scenarios (or controls: N3).
# Soak: SOAK_BUDGET=4h (default) is the time for the scenarios, round-robin, durations scaled
# to fit; each finished run is appended to dir/soak.jsonl, and running again with the same
# RELIABILITY_OUT resumes a killed soak. Then FuzzAPI runs for FUZZ_BUDGET (default 10m; 0
# skips it), and, when a Docker engine answers and the Makefile has the target, make
# reliability-containers runs with SOAK_JSONL=dir/soak.jsonl (it appends its runs there).
# The summary (table and the line "soak: acquisitions=... upper95=...") comes from soak.jsonl:
#   go run ./reliability/cmd/soaksummary dir/soak.jsonl
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
mode="${1:-short}"
# shellcheck source=scripts/zk-lib.sh
. scripts/zk-lib.sh
zk=$(zk_release) || exit 2
echo "reliability $mode: ZooKeeper $zk (ZKTEST_ZK_VERSION=${ZKTEST_ZK_VERSION:-3.9}; each result, the summary and the soak line name the release the servers report)"
out="${RELIABILITY_OUT:-$(mktemp -d /tmp/zklock-reliability-"$mode"-XXXXXX)}"
mkdir -p "$out"
out=$(cd "$out" && pwd) # a relative RELIABILITY_OUT is the caller's, not the test's directory
log="$out/go-test.log"
# summary UNFINISHED: print the suite's summary line, or, when it did not
# write one, the end of its log and UNFINISHED; fails unless no violation.
summary() {
	if [ ! -f "$out/summary.txt" ]; then
		tail -30 "$log"
		echo "$1"
		return 1
	fi
	cat "$out/summary.txt"
	grep -q 'violations=0$' "$out/summary.txt"
}
tags=()
timeout=15m
# export_code exports the library code under test, which each soak run records
# (SoakRecord.Code): the last commit that changed the library's files
# (scripts/library-paths.sh), so that commits of docs, tests or tools alone do
# not change it; marked +modified when the files differ from HEAD's.
export_code() {
	local code library_paths
	mapfile -t library_paths < <(scripts/library-paths.sh) && [ ${#library_paths[@]} -gt 0 ] || return 0
	code=$(git log -1 --format=%H HEAD -- "${library_paths[@]}" 2>/dev/null) && [ -n "$code" ] || return 0
	git diff --quiet HEAD -- "${library_paths[@]}" || code="$code+modified"
	export RELIABILITY_CODE="$code"
}
case "$mode" in
containers | containers-soak)
	# S18-S20 live in their own module (reliability/containers), so that
	# the zklock module does not depend on testcontainers-go.
	cmode=short timeout=15m
	[ "$mode" = containers-soak ] && cmode=soak timeout=60m
	scripts/zk-image.sh >/dev/null || exit 1
	export_code
	(cd reliability/containers && RELIABILITY_MODE="$cmode" RELIABILITY_OUT="$out" RELIABILITY_KEEP="$out/histories" \
		go test -count=1 -timeout "$timeout" -v -run 'TestIntegration_ReliabilityContainers$' .) >"$log" 2>&1
	rc=$?
	(cd reliability/containers && RELIABILITY_MODE=negative RELIABILITY_OUT="$out/negative" \
		go test -tags zklock_negative -count=1 -timeout 15m -v -run 'TestIntegration_ReliabilityContainers$' .) >"$out/go-test-negative.log" 2>&1
	nrc=$?
	grep -E '^\s+suite_test.go:[0-9]+: (S|N)[0-9]+|^\s+C[1-7]: |--- (PASS|FAIL)' "$log" "$out/go-test-negative.log" || true
	echo
	[ -f "$out/table.txt" ] && cat "$out/table.txt"
	echo "report: $out/report.json  (go test output: $log, $out/go-test-negative.log)"
	[ -s "$out/negative/negative.txt" ] && cat "$out/negative/negative.txt" || { echo "negative: no result"; nrc=1; }
	grep -q missed "$out/negative/negative.txt" 2>/dev/null && nrc=1
	summary "reliability-containers: the suite did not finish (rc=$rc)" || exit 1
	[ $rc -eq 0 ] && [ $nrc -eq 0 ]
	exit $?
	;;
short) ;;
soak)
	budget="${SOAK_BUDGET:-4h}"
	secs=$(python3 -c 'import re,sys
m=re.fullmatch(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?",sys.argv[1])
if not m or not any(m.groups()): sys.exit(1)
h,mi,se=(float(x or 0) for x in m.groups()); print(int(h*3600+mi*60+se))' "$budget") ||
		{ echo "SOAK_BUDGET=$budget: want a duration such as 4h, 90m or 90s" >&2; exit 2; }
	timeout="$((secs + 3600))s" # the soak stops itself; this only bounds a hang
	export SOAK_BUDGET="$budget"
	;;
negative) tags=(-tags zklock_negative); timeout=15m ;;
*) echo "usage: $0 short|soak|negative|containers|containers-soak" >&2; exit 2 ;;
esac

export_code

RELIABILITY_MODE="$mode" RELIABILITY_OUT="$out" RELIABILITY_KEEP="$out/histories" \
	go test "${tags[@]}" -count=1 -timeout "$timeout" -v -run 'TestIntegration_Reliability$' ./reliability/ >"$log" 2>&1
rc=$?
grep -E '^\s+suite_test.go:[0-9]+: (S|N)[0-9]+|^\s+suite_test.go:[0-9]+:\s+(C[1-7]|timeline|database): |^\s+soak_suite_test.go:[0-9]+: (soak|S|N)[0-9a-z]*|--- (PASS|FAIL)' "$log" |
	grep -v '^\s*suite_test.go:[0-9]*: *$' | cut -c1-400 || true
echo
if [ "$mode" = soak ]; then
	fuzz="${FUZZ_BUDGET:-10m}"
	if [ "$fuzz" != 0 ]; then
		echo "fuzz: FuzzAPI for $fuzz"
		go test -run '^$' -fuzz '^FuzzAPI$' -fuzztime "$fuzz" -fuzzminimizetime 20x ./reliability/ >"$out/fuzz.txt" 2>&1
		frc=$?
		tail -3 "$out/fuzz.txt"
		[ $frc -eq 0 ] || { echo "fuzz: FuzzAPI failed (see $out/fuzz.txt; the failing input is under reliability/testdata/fuzz/FuzzAPI)"; rc=1; }
	fi
	if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1 && make -n reliability-containers >/dev/null 2>&1; then
		echo "containers: make reliability-containers (a Docker engine answers)"
		SOAK_JSONL="$out/soak.jsonl" make reliability-containers || rc=1
	else
		echo "containers: skipped (no Docker engine answers, or no reliability-containers target)"
	fi
	echo "index: $out/index.html  checkpoint: $out/soak.jsonl  (go test output: $log)"
	go run ./reliability/cmd/soaksummary "$out/soak.jsonl" | tee "$out/soak-summary.txt"
	src=${PIPESTATUS[0]}
	[ $src -eq 0 ] || exit 1
	exit $rc
fi
[ -f "$out/index.html" ] && echo "timelines: $out/index.html"
[ -f "$out/table.txt" ] && cat "$out/table.txt"
echo "report: $out/report.json  (go test output: $log)"
if [ "$mode" = negative ]; then
	[ -s "$out/negative.txt" ] || { echo "negative: no result (see $log)"; tail -20 "$log"; exit 1; }
	cat "$out/negative.txt"
	grep -q 'missed' "$out/negative.txt" && exit 1
	[ $rc -eq 0 ] || exit $rc
	exit 0
fi
summary "reliability: acquisitions=0 faults=0 violations=unknown (the suite did not finish, rc=$rc)" || exit 1
exit $rc
