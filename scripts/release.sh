#!/usr/bin/env bash
# Check the tree for a release and print the tags to push. Tags nothing, pushes nothing.
#
#   scripts/release.sh            check, run the release test, print the tags
#   scripts/release.sh --no-test  check only (no module proxy test)
#
# The version is the first "## vX.Y.Z" heading of CHANGELOG.md. The checks: the work tree is
# clean (nothing to commit, nothing untracked); the version is a semantic version whose tags do
# not exist yet; each nested module requires the root module at that version; gofmt, go vet and
# go mod tidy are clean in every module (make vet); docs/reliability-results.md's first "soak:"
# line names the library code of the tree (scripts/library-paths.sh: what the root package
# compiles, and go.mod): its commit, or an earlier one whose every later library commit the
# document names; internal/release's test builds a module proxy from the tree at that version
# and resolves and builds every published module from it with go get, offline; make dist builds
# the release's files at that version (PLATFORMS narrows it) and SHA256SUMS is checked. Then it
# prints the git commands that tag HEAD and push the tags: the root module (vX.Y.Z) and the
# nested ones (zktest/containers/vX.Y.Z, contrib/prometheus/vX.Y.Z, contrib/otel/vX.Y.Z).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
GO=${GO:-go}

die() { echo "release: $*" >&2; exit 1; }

test=1
case "${1:-}" in
"") ;;
--no-test) test=0 ;;
-h | --help) sed -n '2,17p' "$0"; exit 0 ;;
*) die "unknown argument $1 (want --no-test or nothing)" ;;
esac

root=github.com/zklock/zklock
nested=(zktest/containers contrib/prometheus contrib/otel)

[ -z "$(git status --porcelain)" ] || die "the work tree is not clean (commit or remove):
$(git status --short)"

version=$(sed -n 's/^## \(v[0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\)\([^0-9A-Za-z.-].*\)\{0,1\}$/\1/p' CHANGELOG.md | head -n1)
[ -n "$version" ] || die "CHANGELOG.md has no \"## vX.Y.Z\" heading"

tags=("$version")
for d in "${nested[@]}"; do tags+=("$d/$version"); done
for t in "${tags[@]}"; do
	! git rev-parse -q --verify "refs/tags/$t" >/dev/null || die "tag $t exists already"
done

for d in "${nested[@]}"; do
	grep -Eq "^[[:space:]]*(require[[:space:]]+)?$root $version([[:space:]]|$)" "$d/go.mod" ||
		die "$d/go.mod must require $root $version (it has: $(grep -E "$root v" "$d/go.mod" | tr -s ' \t' ' '))"
done

# The release soak must stand for the library code that ships.
line=$(grep -m1 -E '^[[:space:]]*soak: ' docs/reliability-results.md || true)
code=$(sed -n 's/^[[:space:]]*soak: code=\([0-9a-f]\{40\}\) .*/\1/p' <<<"$line")
[ -n "$code" ] || die "docs/reliability-results.md has no \"soak: code=<commit> ...\" line"
git cat-file -e "$code^{commit}" 2>/dev/null || die "the soak's commit $code is not in this repository"
mapfile -t library_paths < <(scripts/library-paths.sh)
[ ${#library_paths[@]} -gt 0 ] || die "scripts/library-paths.sh failed"
unsoaked=()
for c in $(git log --format=%h --abbrev=7 "$code..HEAD" -- "${library_paths[@]}"); do
	grep -q "$c" docs/reliability-results.md || unsoaked+=("$c")
done
[ ${#unsoaked[@]} -eq 0 ] || die "the library changed after the release soak on ${code:0:12}: ${unsoaked[*]}; soak the final code (make soak) and put its line at the top of docs/reliability-results.md"

make --no-print-directory vet >/dev/null || die "make vet failed"

if [ "$test" = 1 ]; then
	(cd internal/release && "$GO" test -count=1 .) >/dev/null || die "the module proxy test failed (cd internal/release && go test -v .)"
fi

# The release's files: make dist at the version, checked against its SHA256SUMS.
VERSION="$version" scripts/dist.sh >/dev/null || die "make dist failed (VERSION=$version scripts/dist.sh)"
(cd dist && sha256sum --quiet -c SHA256SUMS) || die "dist/SHA256SUMS does not match the files in dist/"
b=dist/zklock-$("$GO" env GOOS)-$("$GO" env GOARCH) # the one that runs here, if built
[ ! -x "$b" ] || "$b" --version | grep -q "^zklock $version " || die "$b --version does not name $version: $("$b" --version)"
echo "release: dist/ holds $(grep -c . dist/SHA256SUMS) files of $version; SHA256SUMS checked"

echo "release: $version at $(git rev-parse --short HEAD) is ready; to publish it:"
for t in "${tags[@]}"; do
	echo "  git tag -a $t -m 'zklock $t'"
done
echo "  git push origin ${tags[*]}"
