# shellcheck shell=bash
# Sourced by scripts/demo.sh and scripts/zk-dev.sh: what their standalone
# ZooKeeper servers on 127.0.0.1 share; and by scripts/bench.sh and
# scripts/reliability.sh for zk_release.

# zk_classpath: print the server class path of the release ZKTEST_ZK_VERSION
# selects ("3.9", the default: Debian's newest 3.9 in ${ZKLOCK_CACHE:-/var/cache/zklock},
# which scripts/fetch-newer.sh fills; "3.8": bookworm's package), as zktest
# does: dependencies first, since each Debian jar's Class-Path names
# bookworm's jars. Prints nothing (and fails) when the jars are missing;
# an unknown version is an error.
zk_classpath() {
	local v=${ZKTEST_ZK_VERSION:-3.9} dir cp
	case "$v" in
	3.9)
		dir=${ZKLOCK_CACHE:-/var/cache/zklock}/zookeeper-3.9/usr/share/java
		cp="$dir/zookeeper-jute.jar:$dir/zookeeper.jar"
		;;
	3.8) cp=/usr/share/java/zookeeper.jar ;;
	*)
		echo "ZKTEST_ZK_VERSION=$v: want 3.9 (the default) or 3.8" >&2
		return 2
		;;
	esac
	local j
	for j in ${cp//:/ }; do [ -f "$j" ] || return 1; done
	[ -f /usr/share/java/slf4j-simple.jar ] && cp="$cp:/usr/share/java/slf4j-simple.jar"
	echo "$cp"
}

# zk_release: print the upstream release ("3.9.6") of the server that
# ZKTEST_ZK_VERSION selects, from its Debian package's version (the one
# zktest and zk_classpath run), or "from ZKTEST_CLASSPATH" when that
# overrides it. Fails, with zk_classpath's message, on an unknown version.
zk_release() {
	if [ -n "${ZKTEST_CLASSPATH:-}" ]; then
		echo "from ZKTEST_CLASSPATH"
		return 0
	fi
	local v=${ZKTEST_ZK_VERSION:-3.9} rel=""
	zk_classpath >/dev/null
	[ $? -eq 2 ] && return 2
	case "$v" in
	3.9) rel=$(cat "${ZKLOCK_CACHE:-/var/cache/zklock}/zookeeper-3.9/version" 2>/dev/null) ;;
	3.8) rel=$(dpkg-query -W -f '${Version}' zookeeper 2>/dev/null) ;;
	esac
	rel=${rel%%[-+~]*}
	echo "${rel:-$v (not installed: run make deps)}"
}

# zk_config FILE DATADIR PORT TICK_MS: write a standalone server's zoo.cfg
# (clients on 127.0.0.1:PORT only, sessions from two ticks to 60 s, no
# fsync, every four-letter word, no admin server).
zk_config() {
	cat >"$1" <<CFG
tickTime=$4
initLimit=50
syncLimit=10
dataDir=$2
clientPort=$3
clientPortAddress=127.0.0.1
minSessionTimeout=$((2 * $4))
maxSessionTimeout=60000
forceSync=no
4lw.commands.whitelist=*
admin.enableServer=false
CFG
}

# zk_four PORT WORD: send a four-letter word to 127.0.0.1:PORT and print
# the answer (empty on failure).
zk_four() {
	timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1 && printf '%s' '$2' >&3 && cat <&3" 2>/dev/null || true
}
