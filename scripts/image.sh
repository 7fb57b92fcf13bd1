#!/usr/bin/env bash
# Build the zklock container image (examples/deploy/Dockerfile) from the
# dist linux/amd64 binary, on a Debian bookworm base built here from Debian
# packages, without any container registry (as scripts/zk-image.sh does):
#   mmdebstrap (this machine's Debian mirror, read from its apt sources)
#   -> root file system tarball -> docker import -> zklock/debian:bookworm
#   -> docker build --build-arg BASE=zklock/debian:bookworm-<hash>
# The base is tagged with a hash of its recipe (this script's base section,
# the mirrors, the architecture) and reused while that holds: a second run
# takes seconds. The Dockerfile's own default base is debian:bookworm-slim,
# for machines that reach a registry.
#
#   scripts/image.sh [--tag NAME]   build NAME (default zklock/zklock:VERSION and
#                                   zklock/zklock:latest) and print the tag
#   scripts/image.sh --base         build (or reuse) the base only, print its tag
#   scripts/image.sh --if-engine    as above, but only say so and succeed when no
#                                   Docker engine answers
# The binary is dist/zklock-linux-amd64 (make dist; BIN=FILE overrides it);
# VERSION is what its --version prints first.
# mmdebstrap is installed with apt-get when missing (as root).
set -euo pipefail

self=$(realpath "$0")
cd "$(dirname "$self")/.."
suite=bookworm
base_repo=zklock/debian
# The base: Debian's essential set (bash, coreutils, dash) and the CA
# certificates zklock trusts for TLS without --tls-ca.
packages="ca-certificates"

die() { echo "image: $*" >&2; exit 1; }
say() { echo "image: $*" >&2; }

tags=() base_only=0 soft=0 tmp=()
trap 'rm -rf "${tmp[@]}"' EXIT
while [ $# -gt 0 ]; do
	case "$1" in
	--tag) [ $# -ge 2 ] || die "--tag wants a NAME"; tags+=("$2"); shift ;;
	--base) base_only=1 ;;
	--if-engine) soft=1 ;;
	-h | --help) sed -n '2,21p' "$self"; exit 0 ;;
	*) die "unknown argument $1 (want --tag NAME, --base or --if-engine)" ;;
	esac
	shift
done

command -v docker >/dev/null || { [ "$soft" = 1 ] && { say "no docker CLI: no image built"; exit 0; }; false; } ||
	die "the docker CLI is not installed (apt-get install docker.io)"
if ! info_err=$(docker info --format '{{.ServerVersion}}' 2>&1 >/dev/null); then
	[ "$soft" = 1 ] && { say "no Docker engine answers (${info_err//$'\n'/ }): no image built"; exit 0; }
	die "no Docker engine answers (docker info: ${info_err//$'\n'/ }); start dockerd or set DOCKER_HOST"
fi

# mirrors prints one "deb URI SUITE main" line per Debian mirror in apt's
# sources (one-line .list files and deb822 .sources files) for bookworm,
# bookworm-updates and bookworm-security, as scripts/zk-image.sh reads them.
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

mapfile -t sources < <(mirrors)
[ ${#sources[@]} -gt 0 ] || die "no Debian $suite mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/"
section=$(sed -n '/^# BASE-RECIPE-BEGIN/,/^# BASE-RECIPE-END/p' "$self") && [ -n "$section" ] || die "cannot read the base's recipe in $self"
recipe=$( { echo "$section"; echo "$packages"; printf '%s\n' "${sources[@]}"; uname -m; } | sha256sum | cut -c1-12)
base=$base_repo:$suite-$recipe

# BASE-RECIPE-BEGIN
build_base() {
	if ! command -v mmdebstrap >/dev/null; then
		[ "$(id -u)" = 0 ] || die "mmdebstrap is missing; install it as root: apt-get install mmdebstrap"
		say "installing mmdebstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; } ||
			die "apt-get install mmdebstrap failed"
	fi
	[ "$(id -u)" = 0 ] || command -v unshare >/dev/null || die "not root and no unshare: mmdebstrap cannot build a root file system"
	local work began
	work=$(mktemp -d /tmp/zklock-image-XXXXXX)
	tmp+=("$work")
	began=$(date +%s)
	say "building the $suite root file system from ${sources[0]#deb } (cold build: a minute or two)"
	mmdebstrap --quiet --variant=essential --include="$packages" \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
		--aptopt='APT::Install-Recommends "false"' \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/usr/share/man' \
		"$suite" "$work/root.tar" "${sources[@]}" >&2 ||
		die "mmdebstrap failed (see above); the mirrors were: ${sources[*]}"
	docker import --change 'CMD ["bash"]' --change "LABEL org.zklock.recipe=$recipe" \
		"$work/root.tar" "$base" >/dev/null || die "docker import failed"
	# Drop the bases of older recipes (not used by any container).
	docker images --format '{{.Repository}}:{{.Tag}}' "$base_repo" | grep -F "$base_repo:$suite-" | grep -vxF "$base" |
		xargs -r docker rmi >/dev/null 2>&1 || true
	say "built $base in $(($(date +%s) - began))s"
}
# BASE-RECIPE-END

if docker image inspect "$base" >/dev/null 2>&1; then
	say "reusing $base (recipe unchanged)"
else
	build_base
fi
docker tag "$base" "$base_repo:$suite"
if [ "$base_only" = 1 ]; then
	echo "$base"
	exit 0
fi

bin=${BIN:-dist/zklock-linux-amd64}
[ -x "$bin" ] || die "no $bin: run make dist first (or give BIN=FILE, a linux/amd64 zklock)"
version=$("$bin" --version | awk '{print $2}') || die "$bin --version failed"
[ ${#tags[@]} -gt 0 ] || tags=("zklock/zklock:$version" "zklock/zklock:latest")

ctx=$(mktemp -d /tmp/zklock-image-ctx-XXXXXX)
tmp+=("$ctx")
cp "$bin" "$ctx/zklock"
cp examples/deploy/Dockerfile "$ctx/Dockerfile"
args=()
for t in "${tags[@]}"; do args+=(-t "$t"); done
docker build -q --build-arg "BASE=$base" --label "org.zklock.version=$version" "${args[@]}" "$ctx" >/dev/null ||
	die "docker build failed"
say "built ${tags[*]} (zklock $version on $base)"
printf '%s\n' "${tags[0]}"
