#!/usr/bin/env bash
# The fault-injection suite (reliability/; see docs/reliability.md).
#   scripts/reliability.sh short     make reliability: every scenario at short durations (<= 10 min)
#   scripts/reliability.sh soak      make soak: the plan's durations
#   scripts/reliability.sh negative  make reliability-negative: the broken variants N1-N5
# RELIABILITY_OUT=dir keeps the table, report.json and the histories there
# (default: a fresh temporary directory, printed). RELIABILITY_ONLY=S5,S7 runs only those
# scenarios (or controls: N3).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
mode="${1:-short}"
out="${RELIABILITY_OUT:-$(mktemp -d /tmp/zklock-reliability-"$mode"-XXXXXX)}"
mkdir -p "$out"
log="$out/go-test.log"
tags=()
timeout=15m
case "$mode" in
short) ;;
soak) timeout=120m ;;
negative) tags=(-tags zklock_negative); timeout=15m ;;
*) echo "usage: $0 short|soak|negative" >&2; exit 2 ;;
esac

RELIABILITY_MODE="$mode" RELIABILITY_OUT="$out" RELIABILITY_KEEP="$out/histories" \
	go test "${tags[@]}" -count=1 -timeout "$timeout" -v -run 'TestIntegration_Reliability$' ./reliability/ >"$log" 2>&1
rc=$?
grep -E '^\s+suite_test.go:[0-9]+: (S|N)[0-9]+|^\s+C[1-7]: |--- (PASS|FAIL)' "$log" | grep -v '^\s*suite_test.go:[0-9]*: *$' || true
echo
[ -f "$out/table.txt" ] && cat "$out/table.txt"
echo "report: $out/report.json  (go test output: $log)"
if [ "$mode" = negative ]; then
	[ -s "$out/negative.txt" ] || { echo "negative: no result (see $log)"; tail -20 "$log"; exit 1; }
	cat "$out/negative.txt"
	grep -q 'missed' "$out/negative.txt" && exit 1
	[ $rc -eq 0 ] || exit $rc
	exit 0
fi
if [ ! -f "$out/summary.txt" ]; then
	tail -30 "$log"
	echo "reliability: acquisitions=0 faults=0 violations=unknown (the suite did not finish, rc=$rc)"
	exit 1
fi
cat "$out/summary.txt"
grep -q 'violations=0$' "$out/summary.txt" || exit 1
exit $rc
