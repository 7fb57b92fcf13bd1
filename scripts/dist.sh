#!/usr/bin/env bash
# Build the release binaries of cmd/zklock into dist/: static (CGO_ENABLED=0,
# -trimpath) for linux and darwin on amd64 and arm64, each stamped with the
# version and commit (zklock --version prints them), and dist/SHA256SUMS
# (check with: cd dist && sha256sum -c SHA256SUMS), with the manual page
# zklock.1 and the completion scripts zklock.bash, _zklock (zsh) and
# zklock.fish when one of the binaries runs here.
#
#   scripts/dist.sh                  version from git describe --tags --always
#   VERSION=v0.3.0 scripts/dist.sh   that version (make dist VERSION=v0.3.0)
#   PLATFORMS="linux/amd64" scripts/dist.sh   only those platforms
#
# Prints the paths it wrote, one a line. dist/ is rebuilt from scratch.
set -euo pipefail

cd "$(dirname "$0")/.."
GO=${GO:-go}
command -v "$GO" >/dev/null || GO=/usr/local/go/bin/go
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}

die() { echo "dist: $*" >&2; exit 1; }

commit=$(git rev-parse HEAD 2>/dev/null) || commit=
version=${VERSION:-}
if [ -z "$version" ]; then
	version=$(git describe --tags --always --dirty 2>/dev/null) || die "no VERSION given and git describe failed (not a git checkout?): make dist VERSION=vX.Y.Z"
fi
case "$version" in
*[!A-Za-z0-9._+-]*) die "VERSION $version: want letters, digits and . _ + - only" ;;
esac

rm -rf dist
mkdir -p dist
ldflags="-s -w -X main.buildVersion=$version -X main.buildCommit=$commit"
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	out=dist/zklock-$os-$arch
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$GO" build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" ./cmd/zklock ||
		die "go build for $p failed"
	echo "$out"
done
# The manual page and the completion scripts, from this machine's binary.
host=dist/zklock-$("$GO" env GOHOSTOS)-$("$GO" env GOHOSTARCH)
if [ -x "$host" ]; then
	"$host" man >dist/zklock.1
	"$host" completion bash >dist/zklock.bash
	"$host" completion zsh >dist/_zklock
	"$host" completion fish >dist/zklock.fish
	printf '%s\n' dist/zklock.1 dist/zklock.bash dist/_zklock dist/zklock.fish
fi
(cd dist && sha256sum zklock-* zklock.* _zklock 2>/dev/null >SHA256SUMS || sha256sum zklock-* >SHA256SUMS)
echo dist/SHA256SUMS
echo "dist: zklock $version (${commit:0:12}) for $platforms" >&2
