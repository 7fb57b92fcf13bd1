#!/usr/bin/env bash
# Build the ZooKeeper 3.8 image that zktest's containers backend runs, from
# Debian bookworm packages, without any container registry:
#   mmdebstrap (this machine's own Debian mirror, read from its apt sources)
#   -> root file system tarball -> docker import (entrypoint, env, labels).
#
#   scripts/zk-image.sh           build (or reuse) and print the image's tag
#   scripts/zk-image.sh --tag     print the tag the current recipe has, build nothing
#   scripts/zk-image.sh --force   rebuild even if the tag exists
#   scripts/zk-image.sh --if-engine   build, but only say so and succeed when no
#                                     Docker engine answers (make test: the tests skip then)
#
# The image is tagged zklock/zookeeper:3.8-<recipe hash> (a hash of this
# script and of the mirrors it reads) and also zklock/zookeeper:3.8, the
# name the containers backend runs by default (ZKTEST_IMAGE overrides it).
# A second run with the same recipe finds the tag and returns in seconds.
# mmdebstrap is installed with apt-get when missing (as root).
set -euo pipefail

repo="zklock/zookeeper"
alias_tag="$repo:3.8"
suite="bookworm"
# libzookeeper-java is the server's jars without the zookeeper package's
# dependency on a full (X11) JRE; iproute2 and iptables let the backend cut
# links between members (partitions) inside the containers.
packages="libzookeeper-java,libslf4j-java,default-jre-headless,iproute2,iptables"

die() { echo "zk-image: $*" >&2; exit 1; }
say() { echo "zk-image: $*" >&2; }

mode=build
soft=0
case "${1:-}" in
"") ;;
--tag) mode=tag ;;
--force) mode=force ;;
--if-engine) soft=1 ;;
-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
*) die "unknown argument $1 (want --tag, --force or nothing)" ;;
esac

# mirrors prints one "deb URI SUITE main" line per Debian mirror configured
# in apt's sources (one-line .list files and deb822 .sources files), for the
# suites bookworm, bookworm-updates and bookworm-security.
mirrors() {
	local f
	{
		[ -f /etc/apt/sources.list ] && { echo "@list"; cat /etc/apt/sources.list; }
		for f in /etc/apt/sources.list.d/*.list; do [ -f "$f" ] && { echo "@list"; cat "$f"; }; done
		for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && { echo "@deb822"; cat "$f"; echo; }; done
		true
	} | awk -v want="$suite" '
	function emit(uri, suites,   n, a, i) {
		if (uri !~ /debian/) return
		n = split(suites, a, /[ \t]+/)
		for (i = 1; i <= n; i++)
			if (a[i] == want || a[i] == want "-updates" || a[i] == want "-security")
				print "deb " uri " " a[i] " main"
	}
	function flush() {
		if (types ~ /(^|[ \t])deb([ \t]|$)/ && enabled != "no") { n = split(uris, u, /[ \t]+/); for (j = 1; j <= n; j++) emit(u[j], suites) }
		types = uris = suites = enabled = ""
	}
	/^@list$/ { flush(); fmt = "list"; next }
	/^@deb822$/ { flush(); fmt = "deb822"; next }
	fmt == "deb822" {
		if ($0 ~ /^[ \t]*$/) { flush(); next }
		if ($0 ~ /^#/) next
		k = tolower($1); sub(/:$/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v)
		if (k == "types") types = v; else if (k == "uris") uris = v; else if (k == "suites") suites = v; else if (k == "enabled") enabled = v
		next
	}
	fmt == "list" && /^[ \t]*deb[ \t]/ { sub(/\[[^]]*\]/, ""); emit($2, $3) }
	END { flush() }
	' | awk '!seen[$0]++'
}

command -v docker >/dev/null || { [ "$soft" = 1 ] && { say "no docker CLI: no image built; the containers backend's tests will skip"; exit 0; }; false; } || die "the docker CLI is not installed (apt-get install docker.io); a Docker engine is needed to import the image"
if ! info_err=$(docker info --format '{{.ServerVersion}}' 2>&1 >/dev/null); then
	[ "$soft" = 1 ] && { say "no Docker engine answers (${info_err//$'\n'/ }): no image built; the containers backend's tests will skip"; exit 0; }
	die "no Docker engine answers (docker info: ${info_err//$'\n'/ }); start dockerd or set DOCKER_HOST"
fi

mapfile -t sources < <(mirrors)
[ ${#sources[@]} -gt 0 ] || die "no Debian $suite mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/ (want a 'deb URI $suite main' line or a deb822 entry)"

hash=$( { cat "$0"; printf '%s\n' "${sources[@]}"; uname -m; } | sha256sum | cut -c1-12)
tag="$repo:3.8-$hash"
if [ "$mode" = tag ]; then
	echo "$tag"
	exit 0
fi

if [ "$mode" = build ] && docker image inspect "$tag" >/dev/null 2>&1; then
	docker tag "$tag" "$alias_tag"
	say "reusing $tag (recipe unchanged)"
	echo "$tag"
	exit 0
fi

if ! command -v mmdebstrap >/dev/null; then
	[ "$(id -u)" = 0 ] || die "mmdebstrap is missing; install it as root: apt-get install mmdebstrap"
	say "installing mmdebstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; } ||
		die "apt-get install mmdebstrap failed"
fi
[ "$(id -u)" = 0 ] || command -v unshare >/dev/null || die "not root and no unshare: mmdebstrap cannot build a root file system"

work=$(mktemp -d /tmp/zk-image-XXXXXX)
trap 'rm -rf "$work"' EXIT
began=$(date +%s)

# The entrypoint writes zoo.cfg from $ZOO_CFG (standalone defaults when
# unset) and myid from $ZOO_MY_ID, then runs the server in the foreground.
cat >"$work/zk-run" <<'EOF'
#!/bin/sh
set -e
mkdir -p /data /conf
if [ -n "$ZOO_CFG" ]; then
	printf '%s\n' "$ZOO_CFG" >/conf/zoo.cfg
else
	printf 'tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir=/data\nclientPort=2181\n4lw.commands.whitelist=*\nadmin.enableServer=false\n' >/conf/zoo.cfg
fi
if [ -n "$ZOO_MY_ID" ]; then echo "$ZOO_MY_ID" >/data/myid; fi
# shellcheck disable=SC2086
exec java $JVMFLAGS -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar \
	org.apache.zookeeper.server.quorum.QuorumPeerMain /conf/zoo.cfg
EOF
chmod 0755 "$work/zk-run"

hooks=()
# Reuse the host's downloaded packages when there are any (apt checks them).
if compgen -G '/var/cache/apt/archives/*.deb' >/dev/null; then
	hooks+=(--skip=download/empty --setup-hook='mkdir -p "$1"/var/cache/apt/archives' --setup-hook='sync-in /var/cache/apt/archives /var/cache/apt/archives')
fi

say "building $tag from ${sources[0]#deb } (cold build: a few minutes)"
mmdebstrap --variant=essential --include="$packages" \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
	--aptopt='APT::Install-Recommends "false"' \
	"${hooks[@]}" \
	--setup-hook='mkdir -p "$1/usr/share/man/man1"' \
	--customize-hook='mkdir -p "$1/usr/local/bin" "$1/data" "$1/conf"' \
	--customize-hook="cp '$work/zk-run' \"\$1/usr/local/bin/zk-run\"" \
	--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/usr/share/doc-base "$1"/usr/share/common-licenses "$1"/usr/share/man' \
	"$suite" "$work/root.tar" "${sources[@]}" ||
	die "mmdebstrap failed (see above); the mirrors were: ${sources[*]}"

content=$(sha256sum "$work/root.tar" | cut -c1-16)
docker import \
	--change 'ENTRYPOINT ["/usr/local/bin/zk-run"]' \
	--change 'ENV JAVA_TOOL_OPTIONS= JVMFLAGS=-Xmx256m' \
	--change 'WORKDIR /data' \
	--change 'EXPOSE 2181 2888 3888' \
	--change "LABEL org.zklock.recipe=$hash org.zklock.rootfs=$content org.zklock.zookeeper=3.8" \
	"$work/root.tar" "$tag" >/dev/null || die "docker import failed"
docker tag "$tag" "$alias_tag"
# Drop the images of older recipes (not used by any container).
docker images --format '{{.Repository}}:{{.Tag}}' "$repo" | grep -F "$repo:3.8-" | grep -vxF "$tag" |
	xargs -r docker rmi >/dev/null 2>&1 || true
size=$(docker image inspect --format '{{.Size}}' "$tag")
say "built $tag ($((size / 1024 / 1024)) MiB) in $(($(date +%s) - began))s"
echo "$tag"
