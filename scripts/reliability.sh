#!/usr/bin/env bash
# The fault-injection suite (reliability/, plan: docs reliability-plan.md §6).
#   scripts/reliability.sh short     make reliability: every scenario at short durations (<= 10 min)
#   scripts/reliability.sh soak      make soak: the plan's durations
#   scripts/reliability.sh negative  make reliability-negative: the broken variants N1-N4
#   scripts/reliability.sh containers       make reliability-containers: S18-S20 on an ensemble in
#                                           containers (zktest/containers), then N3 under S18
#   scripts/reliability.sh containers-soak  the same at the plan's durations (part of make soak)
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
containers | containers-soak)
	# S18-S20 live in the containers module (zktest/containers/scenarios), so
	# that the zklock module does not depend on testcontainers-go.
	cmode=short timeout=15m
	[ "$mode" = containers-soak ] && cmode=soak timeout=60m
	scripts/zk-image.sh >/dev/null || exit 1
	(cd zktest/containers && RELIABILITY_MODE="$cmode" RELIABILITY_OUT="$out" RELIABILITY_KEEP="$out/histories" \
		go test -count=1 -timeout "$timeout" -v -run 'TestIntegration_ReliabilityContainers$' ./scenarios/) >"$log" 2>&1
	rc=$?
	(cd zktest/containers && RELIABILITY_MODE=negative RELIABILITY_OUT="$out/negative" \
		go test -tags zklock_negative -count=1 -timeout 15m -v -run 'TestIntegration_ReliabilityContainers$' ./scenarios/) >"$out/go-test-negative.log" 2>&1
	nrc=$?
	grep -E '^\s+suite_test.go:[0-9]+: (S|N)[0-9]+|^\s+C[1-7]: |--- (PASS|FAIL)' "$log" "$out/go-test-negative.log" || true
	echo
	[ -f "$out/table.txt" ] && cat "$out/table.txt"
	echo "report: $out/report.json  (go test output: $log, $out/go-test-negative.log)"
	[ -s "$out/negative/negative.txt" ] && cat "$out/negative/negative.txt" || { echo "negative: no result"; nrc=1; }
	grep -q missed "$out/negative/negative.txt" 2>/dev/null && nrc=1
	if [ ! -f "$out/summary.txt" ]; then
		tail -30 "$log"
		echo "reliability-containers: the suite did not finish (rc=$rc)"
		exit 1
	fi
	cat "$out/summary.txt"
	grep -q 'violations=0$' "$out/summary.txt" || exit 1
	[ $rc -eq 0 ] && [ $nrc -eq 0 ]
	exit $?
	;;
short) ;;
soak) timeout=120m ;;
negative) tags=(-tags zklock_negative); timeout=15m ;;
*) echo "usage: $0 short|soak|negative|containers|containers-soak" >&2; exit 2 ;;
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
