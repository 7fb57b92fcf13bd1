#!/usr/bin/env bash
# Build the ZooKeeper images that zktest's containers backend runs, from
# Debian packages, without any container registry, in the official
# `zookeeper` image's layout (/docker-entrypoint.sh, zkServer.sh
# start-foreground, /conf, /data, the ZOO_* variables):
#   mmdebstrap (this machine's own Debian mirror, read from its apt sources)
#   -> root file system tarball -> docker import (entrypoint, env, labels).
# Both images share bookworm's root file system (Java, iproute2, iptables);
#   3.8   runs bookworm's zookeeper package (3.8.0)
#   3.9   adds Debian's newest ZooKeeper 3.9 jars from the cache that
#         scripts/fetch-newer.sh fills (/var/cache/zklock, or $ZKLOCK_CACHE)
#
#   scripts/zk-image.sh [VERSION...]        build (or reuse) and print the tags
#                                           (VERSION: 3.9, 3.8; default both)
#   scripts/zk-image.sh --tag [VERSION...]  print the tags the current recipe has, build nothing
#   scripts/zk-image.sh --force [VERSION...]   rebuild even if the tags exist
#   scripts/zk-image.sh --if-engine [VERSION...]  build, but only say so and succeed when no
#                                           Docker engine answers (make test: the tests skip then)
#
# Each image is tagged zklock/zookeeper:V-<recipe hash> (a hash of this
# script, of the mirrors it reads and of the 3.9 jars' Debian version) and
# also zklock/zookeeper:V, the name the containers backend runs for
# ZKTEST_ZK_VERSION=V (ZKTEST_IMAGE overrides it). A second run with the
# same recipe finds the tag and returns in seconds.
# mmdebstrap is installed with apt-get when missing (as root).
set -euo pipefail

repo="zklock/zookeeper"
suite="bookworm"
cache=${ZKLOCK_CACHE:-/var/cache/zklock}
# libzookeeper-java is the server's jars without the zookeeper package's
# dependency on a full (X11) JRE; iproute2 and iptables let the backend cut
# links between members (partitions) inside the containers.
packages="libzookeeper-java,libslf4j-java,default-jre-headless,iproute2,iptables"

die() { echo "zk-image: $*" >&2; exit 1; }
say() { echo "zk-image: $*" >&2; }
# shellcheck source=scripts/image-lib.sh
. "$(dirname "$0")/image-lib.sh"

mode=build
soft=0
versions=()
for a in "$@"; do
	case "$a" in
	--tag) mode=tag ;;
	--force) mode=force ;;
	--if-engine) soft=1 ;;
	3.9 | 3.8) versions+=("$a") ;;
	-h | --help) sed -n '2,25p' "$0"; exit 0 ;;
	*) die "unknown argument $a (want --tag, --force, --if-engine, 3.9 or 3.8)" ;;
	esac
done
[ ${#versions[@]} -gt 0 ] || versions=(3.9 3.8)

need_engine "$soft" "the containers backend's tests will skip"

mapfile -t sources < <(mirrors)
[ ${#sources[@]} -gt 0 ] || die "no Debian $suite mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/ (want a 'deb URI $suite main' line or a deb822 entry)"

# tag_of V: the tag of version V's current recipe.
tag_of() {
	local extra=
	if [ "$1" = 3.9 ]; then
		extra=$(cat "$cache/zookeeper-3.9/version" 2>/dev/null) || die "no ZooKeeper 3.9 in $cache/zookeeper-3.9: run scripts/fetch-newer.sh (make deps)"
	fi
	echo "$repo:$1-$( { cat "$0" "$(dirname "$0")/image-lib.sh"; printf '%s\n' "${sources[@]}"; uname -m; echo "$extra"; } | sha256sum | cut -c1-12)"
}
todo=()
for v in "${versions[@]}"; do
	tag=$(tag_of "$v")
	if [ "$mode" = tag ]; then
		echo "$tag"
	elif [ "$mode" = build ] && docker image inspect "$tag" >/dev/null 2>&1; then
		docker tag "$tag" "$repo:$v"
		say "reusing $tag (recipe unchanged)"
		echo "$tag"
	else
		todo+=("$v")
	fi
done
[ "$mode" != tag ] && [ ${#todo[@]} -gt 0 ] || exit 0

need_mmdebstrap

work=$(mktemp -d /tmp/zk-image-XXXXXX)
trap 'rm -rf "$work"' EXIT
began=$(date +%s)

# The image has the official `zookeeper` image's layout and environment, so
# that the containers backend runs it and the official one alike:
# /docker-entrypoint.sh writes /conf/zoo.cfg from the ZOO_* variables unless
# the file exists, and /data/myid from ZOO_MY_ID unless it exists, then runs
# its arguments, by default `zkServer.sh start-foreground` (on PATH), which
# runs the server in the foreground with $SERVER_JVMFLAGS and $JVMFLAGS.
cat >"$work/docker-entrypoint.sh" <<'EOF'
#!/bin/bash
set -e
mkdir -p "$ZOO_CONF_DIR" "$ZOO_DATA_DIR" "$ZOO_DATA_LOG_DIR" "$ZOO_LOG_DIR"
if [[ ! -f "$ZOO_CONF_DIR/zoo.cfg" ]]; then
	{
		echo "dataDir=$ZOO_DATA_DIR"
		echo "dataLogDir=$ZOO_DATA_LOG_DIR"
		echo "tickTime=$ZOO_TICK_TIME"
		echo "initLimit=$ZOO_INIT_LIMIT"
		echo "syncLimit=$ZOO_SYNC_LIMIT"
		echo "autopurge.snapRetainCount=$ZOO_AUTOPURGE_SNAPRETAINCOUNT"
		echo "autopurge.purgeInterval=$ZOO_AUTOPURGE_PURGEINTERVAL"
		echo "maxClientCnxns=$ZOO_MAX_CLIENT_CNXNS"
		echo "standaloneEnabled=$ZOO_STANDALONE_ENABLED"
		echo "admin.enableServer=$ZOO_ADMINSERVER_ENABLED"
		for server in ${ZOO_SERVERS:-server.1=localhost:2888:3888;2181}; do echo "$server"; done
		if [[ -n $ZOO_4LW_COMMANDS_WHITELIST ]]; then echo "4lw.commands.whitelist=$ZOO_4LW_COMMANDS_WHITELIST"; fi
		for extra in $ZOO_CFG_EXTRA; do echo "$extra"; done
	} >"$ZOO_CONF_DIR/zoo.cfg"
fi
if [[ ! -f "$ZOO_DATA_DIR/myid" ]]; then echo "${ZOO_MY_ID:-1}" >"$ZOO_DATA_DIR/myid"; fi
exec "$@"
EOF
cat >"$work/zkServer.sh" <<'EOF'
#!/bin/sh
# zkServer.sh start-foreground, as the official image runs it; ZK_CLASSPATH
# is the server's jars, dependencies first (the 3.9 image's).
[ "$1" = start-foreground ] || { echo "zkServer.sh: this image supports only start-foreground" >&2; exit 2; }
# shellcheck disable=SC2086
exec java $SERVER_JVMFLAGS $JVMFLAGS -cp "${ZK_CLASSPATH:-/usr/share/java/zookeeper.jar}:/usr/share/java/slf4j-simple.jar" \
	org.apache.zookeeper.server.quorum.QuorumPeerMain "${ZOOCFGDIR:-/conf}/zoo.cfg"
EOF
chmod 0755 "$work/docker-entrypoint.sh" "$work/zkServer.sh"

hooks=()
# Reuse the host's downloaded packages when there are any (apt checks them).
if compgen -G '/var/cache/apt/archives/*.deb' >/dev/null; then
	hooks+=(--skip=download/empty --setup-hook='mkdir -p "$1"/var/cache/apt/archives' --setup-hook='sync-in /var/cache/apt/archives /var/cache/apt/archives')
fi

say "building the root file system of ${todo[*]} from ${sources[0]#deb } (cold build: a few minutes)"
mmdebstrap_slim --include="$packages" "${hooks[@]}" \
	--setup-hook='mkdir -p "$1/usr/share/man/man1"' \
	--customize-hook='mkdir -p "$1/usr/local/bin" "$1/data" "$1/datalog" "$1/logs" "$1/conf"' \
	--customize-hook="cp '$work/docker-entrypoint.sh' \"\$1/docker-entrypoint.sh\"" \
	--customize-hook="cp '$work/zkServer.sh' \"\$1/usr/local/bin/zkServer.sh\"" \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/usr/share/doc-base "$1"/usr/share/common-licenses "$1"/usr/share/man' \
	"$suite" "$work/root.tar" "${sources[@]}" ||
	die "mmdebstrap failed (see above); the mirrors were: ${sources[*]}"

for v in "${todo[@]}"; do
	tag=$(tag_of "$v")
	tar=$work/root.tar
	env=()
	if [ "$v" = 3.9 ]; then
		# The 3.9 jars beside bookworm's; the jute jar first (each jar's
		# manifest Class-Path names bookworm's 3.8 jars).
		tar=$work/root-3.9.tar
		cp "$work/root.tar" "$tar"
		tar -rhf "$tar" -C "$cache/zookeeper-3.9/usr/share/java" --transform 's,^,opt/zookeeper-3.9/,' \
			--owner=0 --group=0 zookeeper-jute.jar zookeeper.jar
		env=(--change 'ENV ZK_CLASSPATH=/opt/zookeeper-3.9/zookeeper-jute.jar:/opt/zookeeper-3.9/zookeeper.jar')
	fi
	content=$(sha256sum "$tar" | cut -c1-16)
	docker import \
		--change 'ENTRYPOINT ["/docker-entrypoint.sh"]' \
		--change 'CMD ["zkServer.sh", "start-foreground"]' \
		--change 'ENV JAVA_TOOL_OPTIONS= JVMFLAGS=-Xmx256m ZOOCFGDIR=/conf ZOO_CONF_DIR=/conf ZOO_DATA_DIR=/data ZOO_DATA_LOG_DIR=/datalog ZOO_LOG_DIR=/logs ZOO_TICK_TIME=2000 ZOO_INIT_LIMIT=5 ZOO_SYNC_LIMIT=2 ZOO_AUTOPURGE_PURGEINTERVAL=0 ZOO_AUTOPURGE_SNAPRETAINCOUNT=3 ZOO_MAX_CLIENT_CNXNS=60 ZOO_STANDALONE_ENABLED=true ZOO_ADMINSERVER_ENABLED=false' \
		"${env[@]}" \
		--change 'WORKDIR /data' \
		--change 'EXPOSE 2181 2888 3888' \
		--change "LABEL org.zklock.recipe=${tag##*-} org.zklock.rootfs=$content org.zklock.zookeeper=$v" \
		"$tar" "$tag" >/dev/null || die "docker import failed"
	docker tag "$tag" "$repo:$v"
	drop_older "$repo" "$v-" "$tag"
	size=$(docker image inspect --format '{{.Size}}' "$tag")
	say "built $tag ($((size / 1024 / 1024)) MiB) in $(($(date +%s) - began))s"
	echo "$tag"
done
