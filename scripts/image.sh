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
# shellcheck source=scripts/image-lib.sh
. scripts/image-lib.sh

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

need_engine "$soft"

mapfile -t sources < <(mirrors)
[ ${#sources[@]} -gt 0 ] || die "no Debian $suite mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/"
section=$(sed -n '/^# BASE-RECIPE-BEGIN/,/^# BASE-RECIPE-END/p' "$self") && [ -n "$section" ] || die "cannot read the base's recipe in $self"
recipe=$( { echo "$section"; cat scripts/image-lib.sh; echo "$packages"; printf '%s\n' "${sources[@]}"; uname -m; } | sha256sum | cut -c1-12)
base=$base_repo:$suite-$recipe

# BASE-RECIPE-BEGIN
build_base() {
	need_mmdebstrap
	local work began
	work=$(mktemp -d /tmp/zklock-image-XXXXXX)
	tmp+=("$work")
	began=$(date +%s)
	say "building the $suite root file system from ${sources[0]#deb } (cold build: a minute or two)"
	mmdebstrap_slim --quiet --include="$packages" \
		--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/* "$1"/usr/share/man' \
		"$suite" "$work/root.tar" "${sources[@]}" >&2 ||
		die "mmdebstrap failed (see above); the mirrors were: ${sources[*]}"
	docker import --change 'CMD ["bash"]' --change "LABEL org.zklock.recipe=$recipe" \
		"$work/root.tar" "$base" >/dev/null || die "docker import failed"
	drop_older "$base_repo" "$suite-" "$base"
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
