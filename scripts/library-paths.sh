#!/usr/bin/env bash
# scripts/library-paths.sh prints the library's files as the release soak counts
# them, as git pathspecs from the repository's top, one a line: the non-test .go
# files of the root package and of each package of this module that it imports
# (internal/wire today), and go.mod (the releases it is built against). Commits of
# tests, tools, docs or the nested modules do not change them.
# scripts/reliability.sh records the last commit that changed them with each soak
# run; scripts/release.sh and reliability's TestSoakLineNamesTheLibraryCode refuse
# a release whose library changed after its soak.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
GO=${GO:-go}
mod=$("$GO" list -m)
pkgs=$("$GO" list -deps -f "{{with .Module}}{{if eq .Path \"$mod\"}}{{\$.ImportPath}}{{end}}{{end}}" .)
[ -n "$pkgs" ] || { echo "library-paths: go list found no package of $mod" >&2; exit 1; }
for p in $pkgs; do
	rel=${p#"$mod"}
	rel=${rel#/}
	echo ":(top,glob)${rel:+$rel/}*.go"
done
echo ':(top,exclude,glob)**/*_test.go'
echo ':(top)go.mod'
