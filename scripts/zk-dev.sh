#!/usr/bin/env bash
# A ZooKeeper server for local development on 127.0.0.1:${ZK_DEV_PORT:-2181}.
#   scripts/zk-dev.sh start    start it (installs ZooKeeper if missing), wait for ruok -> imok
#                              and for `srvr` to report a Mode (at most 15s)
#   scripts/zk-dev.sh stop     stop it (SIGTERM, then SIGKILL after 10s)
#   scripts/zk-dev.sh status   exit 0 and print `srvr` if it runs, exit 3 if not
# Data and logs live in .tmp/zk-dev at the repository root; they persist
# across restarts (delete the directory for a fresh server).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=zk-lib.sh
. "$root/scripts/zk-lib.sh"
dir="$root/.tmp/zk-dev"
port="${ZK_DEV_PORT:-2181}"
pidfile="$dir/zk.pid"

# four <cmd>: send a four-letter word, print the answer (empty on failure).
four() { zk_four "$port" "$1"; }

# running: our pid file names a live java process that uses our config.
running() {
	[ -f "$pidfile" ] || return 1
	local pid
	pid=$(cat "$pidfile")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
		tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$dir/zoo.cfg"
}

start() {
	if running; then
		echo "zk-dev: already running (pid $(cat "$pidfile")) on 127.0.0.1:$port"
		return 0
	fi
	if [ "$(four ruok)" = imok ]; then
		echo "zk-dev: 127.0.0.1:$port already serves a ZooKeeper not started by this script" >&2
		return 1
	fi
	if ! zk_classpath >/dev/null || ! command -v java >/dev/null 2>&1; then
		"$root/scripts/install-deps.sh"
	fi
	mkdir -p "$dir/data"
	zk_config "$dir/zoo.cfg" "$dir/data" "$port" 200
	local cp
	cp=$(zk_classpath) || { echo "zk-dev: no ZooKeeper server jars for ZKTEST_ZK_VERSION=${ZKTEST_ZK_VERSION:-3.9}" >&2; return 1; }
	setsid java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
		-Dzookeeper.4lw.commands.whitelist='*' -Dzookeeper.admin.enableServer=false \
		-Dzookeeper.extendedTypesEnabled=true -Dznode.container.checkIntervalMs=1000 \
		-cp "$cp" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
		>"$dir/zk.log" 2>&1 </dev/null &
	echo $! >"$pidfile"
	for _ in $(seq 1 150); do
		# imok means the port is up; Mode: means it serves requests.
		if [ "$(four ruok)" = imok ] && four srvr | grep -q '^Mode: '; then
			echo "zk-dev: serving on 127.0.0.1:$port (pid $(cat "$pidfile"), log $dir/zk.log)"
			return 0
		fi
		if ! running; then
			break
		fi
		sleep 0.1
	done
	echo "zk-dev: server did not answer ruok; last log lines:" >&2
	tail -n 20 "$dir/zk.log" >&2 || true
	stop >/dev/null
	return 1
}

stop() {
	if ! running; then
		rm -f "$pidfile"
		echo "zk-dev: not running"
		return 0
	fi
	local pid
	pid=$(cat "$pidfile")
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$pidfile"
	echo "zk-dev: stopped (pid $pid)"
}

status() {
	if running; then
		echo "zk-dev: running (pid $(cat "$pidfile")) on 127.0.0.1:$port"
		four srvr
		return 0
	fi
	echo "zk-dev: not running"
	return 3
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
