#!/usr/bin/env bash
# make demo: leader-only job runners against a ZooKeeper this script starts,
# writing their results to a database through package fence.
#
# 1. Installs ZooKeeper if missing (scripts/install-deps.sh), builds
#    examples/jobrunner, starts a private ZooKeeper on a free 127.0.0.1 port
#    (its own data dir; never 2181). The results database is a SQLite file in
#    the demo's temporary directory, or the PostgreSQL server of
#    DEMO_DSN=postgres://... (the run's rows, under a resource of its own, are
#    deleted at the end).
# 2. Starts three job runners on one election path (2 s sessions). The leader
#    writes a result every 500 ms, in a transaction fenced with its token.
# 3. SIGKILLs the leader: another runner takes over, with a larger token, once
#    the dead leader's session expires.
# 4. SIGSTOPs the new leader (right after one of its commits) past its session
#    timeout, waits for a third leader to write, then SIGCONTs the paused one:
#    it wakes mid-job, still believing it leads, and writes with its old
#    token. The database refuses it (fence.ErrStale, both tokens printed).
# 5. Prints the database's rows and a summary; exits 0 only if tokens
#    increased across leaders, the stale write was refused by the database and
#    is not in it. Everything it started is killed on exit; no database server
#    is started.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=zk-lib.sh
. "$root/scripts/zk-lib.sh"
export PATH="$PATH:/usr/local/go/bin"
GO=${GO:-go}
session=2s
started_at=$(date +%s%N)

work=$(mktemp -d "${TMPDIR:-/tmp}/zklock-demo.XXXXXX")
log="$work/demo.log"
: >"$log"
pids=()
tailpid=

cleanup() {
	local code=$?
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do
		kill -CONT "$pid" 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
	done
	if [ -n "$tailpid" ]; then kill "$tailpid" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	rm -rf "$work"
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

die() {
	say "FAILED: $*"
	sleep 0.3
	echo "demo: FAILED: $*" >&2
	echo "--- last lines of the log ---" >&2
	tail -n 30 "$log" >&2 || true
	exit 1
}

# say: a narrative line, in order with the processes' own lines.
say() { echo "== $*" >>"$log"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
lines() { wc -l <"$log"; }

# await SECONDS FROM REGEX: print the first log line after line FROM that
# matches REGEX; fail after SECONDS.
await() {
	local end=$((SECONDS + $1)) from=$2 pat=$3 line
	while :; do
		line=$(tail -n +"$((from + 1))" "$log" | grep -m1 -E -- "$pat" || true)
		if [ -n "$line" ]; then
			printf '%s\n' "$line"
			return 0
		fi
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.05
	done
}

free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# --- dependencies and build ---
if ! zk_classpath >/dev/null || ! command -v java >/dev/null 2>&1; then
	"$root/scripts/install-deps.sh"
fi
cp=$(zk_classpath) || die "no ZooKeeper server jars for ZKTEST_ZK_VERSION=${ZKTEST_ZK_VERSION:-3.9} after install-deps"
command -v "$GO" >/dev/null 2>&1 || { echo "demo: Go is not installed (looked for $GO)" >&2; exit 1; }
(cd "$root" && "$GO" build -o "$work/bin/" ./examples/jobrunner)

tail -n +1 -f "$log" &
tailpid=$!

# --- ZooKeeper ---
port=$(free_port) || die "no free port"
mkdir -p "$work/zk"
zk_config "$work/zk/zoo.cfg" "$work/zk" "$port" 100
java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
	-Dzookeeper.admin.enableServer=false -Dzookeeper.4lw.commands.whitelist='*' \
	-cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$work/zk/zoo.cfg" \
	>"$work/zk/zk.log" 2>&1 </dev/null &
pids+=($!)
say "starting ZooKeeper on 127.0.0.1:$port (tickTime 100ms, data in $work/zk)"
for _ in $(seq 1 300); do
	if [ "$(zk_four "$port" ruok)" = imok ] && zk_four "$port" srvr | grep -q '^Mode: '; then
		break
	fi
	sleep 0.05
done
zk_four "$port" srvr | grep -q '^Mode: ' || die "ZooKeeper did not start (see $work/zk/zk.log)"
say "ZooKeeper $(zk_four "$port" srvr | sed -n 's/^Zookeeper version: \([0-9.]*\).*/\1/p') serves"

# --- the database and three runners ---
resource=/demo/jobrunner
if [ -n "${DEMO_DSN:-}" ]; then
	db=$DEMO_DSN
	resource="/demo/jobrunner@$(date +%s)-$$" # a fresh ZooKeeper's tokens start low: a resource per run
	say "results go to PostgreSQL (DEMO_DSN), resource $resource"
else
	db="$work/results.db"
	say "results go to the SQLite file $db"
fi
report() { "$work/bin/jobrunner" -db "$db" -resource "$resource" -report "$@"; }

declare -A runner
for i in 1 2 3; do
	"$work/bin/jobrunner" -servers "127.0.0.1:$port" -path /demo/jobrunner -id "runner-$i" \
		-db "$db" -resource "$resource" -session-timeout "$session" -interval 500ms >>"$log" 2>&1 &
	runner[runner-$i]=$!
	pids+=($!)
done
say "started runner-1, runner-2, runner-3 (pids ${runner[runner-1]} ${runner[runner-2]} ${runner[runner-3]}), session timeout $session"

leader_id() { sed -E 's/^\[([^]]+)\] LEADER.*/\1/' <<<"$1"; }
leader_token() { sed -E 's/.*LEADER token=([0-9]+).*/\1/' <<<"$1"; }

# takeover FROM T0 ID TOKEN NONE SAME: await the leader that follows ID
# (token TOKEN) after log line FROM and its first committed write; set
# new_id, new_tok and new_ms (from T0 to its LEADER line). It dies with
# NONE if no runner leads within 20 s, with SAME if ID leads again, and if
# the token did not increase or the new leader writes nothing.
takeover() {
	local from=$1 t0=$2 id=$3 tok=$4 none=$5 same=$6 line t1
	line=$(await 20 "$from" '^\[runner-[0-9]\] LEADER token=') || die "$none"
	t1=$(now_ms)
	new_id=$(leader_id "$line")
	new_tok=$(leader_token "$line")
	[ "$new_id" != "$id" ] || die "$same"
	[ "$new_tok" -gt "$tok" ] || die "token did not increase: $new_tok after $tok"
	new_ms=$((t1 - t0))
	await 10 "$from" "^\[$new_id\] write token=$new_tok .* committed" >/dev/null || die "$new_id wrote nothing"
}

# --- 1: who leads ---
line=$(await 20 0 '^\[runner-[0-9]\] LEADER token=') || die "no leader within 20s"
id1=$(leader_id "$line")
tok1=$(leader_token "$line")
await 10 0 "^\[$id1\] write token=$tok1 value=\"$id1#3\" committed" >/dev/null || die "$id1 did not write 3 times"
say "$id1 leads with fencing token $tok1 and writes every 500ms"

# --- 2: kill the leader ---
mark=$(lines)
say "SIGKILL $id1 (pid ${runner[$id1]}): its session expires after $session, then another runner takes over"
t0=$(now_ms)
{ kill -KILL "${runner[$id1]}" && wait "${runner[$id1]}"; } 2>/dev/null || true
takeover "$mark" "$t0" "$id1" "$tok1" "no new leader after the kill" "the killed runner leads again"
id2=$new_id tok2=$new_tok kill_ms=$new_ms
say "$id2 took over after ${kill_ms}ms with token $tok2 > $tok1"

# --- 3: pause a leader past its session, then resume it ---
# Paused right after a commit, it is computing, not inside a transaction (a
# transaction paused with its locks would hold the next leader up too).
mark=$(lines)
await 10 "$mark" "^\[$id2\] write token=$tok2 .* committed" >/dev/null || die "$id2 stopped writing"
kill -STOP "${runner[$id2]}"
t0=$(now_ms)
mark=$(lines)
say "SIGSTOP $id2 (pid ${runner[$id2]}) for longer than its $session session (a long GC pause)"
takeover "$mark" "$t0" "$id2" "$tok2" "no new leader while $id2 was paused" "the paused runner still leads"
id3=$new_id tok3=$new_tok pause_ms=$new_ms
say "$id3 took over after ${pause_ms}ms with token $tok3 > $tok2, and has written"
mark=$(lines)
say "SIGCONT $id2: it wakes mid-job, still believing it leads, and writes with token $tok2"
kill -CONT "${runner[$id2]}"
refused=$(await 10 "$mark" "^\[$id2\] write token=$tok2 .* REFUSED by the database: .*stale token $tok2: token $tok3 already accepted") ||
	die "no write of $id2 was refused by the database with tokens $tok2 and $tok3"
stale_value=$(sed -E 's/.* value="([^"]+)".*/\1/' <<<"$refused")
await 10 "$mark" "^\[$id2\] term ended" >/dev/null || die "$id2 did not notice the end of its term"
say "the database refused $id2's stale write (token $tok2 < $tok3)"

# --- stop the runners ---
for pid in "${runner[$id2]}" "${runner[$id3]}"; do kill -TERM "$pid" 2>/dev/null || true; done
for _ in $(seq 1 60); do
	kill -0 "${runner[$id2]}" 2>/dev/null || kill -0 "${runner[$id3]}" 2>/dev/null || break
	sleep 0.05
done
sleep 0.3 # let tail print the last lines
kill "$tailpid" 2>/dev/null || true
wait "$tailpid" 2>/dev/null || true
tailpid=

# --- what the database holds ---
drop=()
if [ -n "${DEMO_DSN:-}" ]; then drop=(-drop); fi
report "${drop[@]}" >"$work/report.txt" 2>&1 || { cat "$work/report.txt" >&2; die "could not read the database"; }
cat "$work/report.txt"
grep -qF "value=\"$stale_value\"" "$work/report.txt" && die "the refused write $stale_value is in the database"
while read -r value; do
	grep -qF "value=\"$value\"" "$work/report.txt" && die "the refused write $value is in the database"
done < <(sed -nE 's/^\[runner-[0-9]\] write token=[0-9]+ value="([^"]+)" REFUSED by the database: .*/\1/p' "$log")
while read -r value; do
	grep -qF "value=\"$value\"" "$work/report.txt" || die "the committed write $value is not in the database"
done < <(sed -nE 's/^\[runner-[0-9]\] write token=[0-9]+ value="([^"]+)" committed$/\1/p' "$log")
fenced=$(sed -nE 's/^\[db\] zklock_fence .* token=([0-9]+)$/\1/p' "$work/report.txt")
last=$(sed -nE 's/^\[db\] row .* token=([0-9]+) .*/\1/p' "$work/report.txt" | tail -n 1)
[ -n "$fenced" ] && [ "$fenced" = "$last" ] && [ "$fenced" -ge "$tok3" ] ||
	die "the fence holds token $fenced; the last row's token is $last (want both >= $tok3)"
nrows=$(grep -c '^\[db\] row ' "$work/report.txt" || true)
nrefused=$(grep -c 'REFUSED by the database' "$log" || true)
took=$((($(date +%s%N) - started_at) / 1000000))
cat <<SUMMARY

== summary
leaders in order:        $id1 (token $tok1) -> $id2 (token $tok2) -> $id3 (token $tok3)
tokens increasing:       yes ($tok1 < $tok2 < $tok3)
takeover after SIGKILL:  ${kill_ms}ms (session timeout $session)
takeover after SIGSTOP:  ${pause_ms}ms
stale write:             REFUSED BY THE DATABASE: $refused
database:                $nrows rows, every committed write; $nrefused write(s) refused, none stored; the fence at token $fenced
DEMO OK in $((took / 1000)).$(((took % 1000) / 100))s
SUMMARY
