# shellcheck shell=bash
# Sourced by scripts/demo.sh and scripts/zk-dev.sh: what their standalone
# ZooKeeper servers on 127.0.0.1 share.

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
