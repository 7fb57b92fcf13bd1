#!/usr/bin/env bash
# Fetches the newer releases the tests run beside bookworm's, from Debian's
# newer suites (sid, then trixie), into a cache directory, without installing
# anything and without touching the system's apt state:
#   zookeeper-3.9   libzookeeper-java: Debian's newest ZooKeeper 3.9 (>= 3.9.4;
#                   never 3.9.3, the release with ZOOKEEPER-4925's data loss)
#   curator-5       libcurator-{client,framework,recipes}-java: newest Curator 5
#   kazoo-2         python3-kazoo: newest kazoo 2
# Each lands unpacked (dpkg-deb -x) in CACHE/NAME, with the Debian version in
# CACHE/NAME/version. apt verifies the suites' Release signatures with
# Debian's archive keyring and each package's hash, as for any install.
#
#   scripts/fetch-newer.sh           fetch what is missing (idempotent: nothing
#                                    is downloaded when every entry is there)
#   scripts/fetch-newer.sh --check   exit 1, naming what is missing, fetch nothing
#
# CACHE is $ZKLOCK_CACHE, default /var/cache/zklock (zktest and the peers look
# there too). The mirror is this machine's own Debian mirror, read from its
# apt sources.
set -euo pipefail

cache=${ZKLOCK_CACHE:-/var/cache/zklock}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
suites=(sid trixie)

die() { echo "fetch-newer: $*" >&2; exit 1; }
say() { echo "fetch-newer: $*" >&2; }

# entries: NAME;PACKAGES;VERSION-PATTERN (an extended regex on the Debian
# version);REFUSED (a regex of versions never taken).
entries=(
	"zookeeper-3.9;libzookeeper-java;^3\.9\.([4-9]|[1-9][0-9]);^3\.9\.[0-3]([^0-9]|$)"
	"curator-5;libcurator-client-java libcurator-framework-java libcurator-recipes-java;^5\.;^$"
	"kazoo-2;python3-kazoo;^2\.;^$"
)

missing=()
for e in "${entries[@]}"; do
	IFS=';' read -r name _ _ _ <<<"$e"
	[ -s "$cache/$name/version" ] || missing+=("$name")
done
if [ "${1:-}" = --check ]; then
	[ ${#missing[@]} -eq 0 ] && exit 0
	echo "fetch-newer: missing in $cache: ${missing[*]}" >&2
	exit 1
fi
if [ ${#missing[@]} -eq 0 ]; then
	say "ZooKeeper 3.9, Curator 5 and kazoo 2 are in $cache already"
	exit 0
fi
mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] ||
	die "cannot write $cache: run as root, or set ZKLOCK_CACHE to a directory of yours (zktest reads it too)"
[ -r "$keyring" ] || die "no Debian archive keyring at $keyring (apt-get install debian-archive-keyring)"

# mirror prints the URI of the first Debian mirror in apt's sources.
mirror() {
	{
		cat /etc/apt/sources.list 2>/dev/null || true
		cat /etc/apt/sources.list.d/*.list 2>/dev/null || true
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true
	} | awk '
	/^[ \t]*deb[ \t]/ { sub(/\[[^]]*\]/, ""); if ($2 ~ /debian\/?$/) { print $2; exit } }
	tolower($1) == "uris:" && $2 ~ /debian\/?$/ { print $2; exit }'
}
uri=$(mirror)
[ -n "$uri" ] || die "no Debian mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/"

apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/etc/parts" "$apt_dir/debs"
: >"$apt_dir/etc/sources.list"
for s in "${suites[@]}"; do
	echo "deb [signed-by=$keyring] $uri $s main" >>"$apt_dir/etc/sources.list"
done
apt_opts=(
	-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/etc/parts"
	-o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$apt_dir/etc/parts"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::Status=/dev/null"
	-o "Dir::Cache=$apt_dir" -o "Dir::Cache::Archives=$apt_dir/archives"
	-o "APT::Sandbox::User=root" -o "Debug::NoLocking=1"
)
say "reading the package lists of ${suites[*]} from $uri"
if ! out=$(apt-get "${apt_opts[@]}" -qq update 2>&1); then
	# A mirror that serves a dated snapshot of the archive has Release files
	# past their Valid-Until (sid's last a week): their signatures still
	# verify; only the freshness check is waived, as such machines' own apt
	# configuration does.
	grep -q 'is expired' <<<"$out" || die "apt-get update of ${suites[*]} failed (signatures are checked against $keyring):
$out"
	say "the mirror's ${suites[*]} Release files are past their Valid-Until (a snapshot mirror?): reading them with the signature check only"
	apt_opts+=(-o "Acquire::Check-Valid-Until=false")
	apt-get "${apt_opts[@]}" -qq update >/dev/null ||
		die "apt-get update of ${suites[*]} failed (signatures are checked against $keyring)"
fi

# newest PACKAGE PATTERN REFUSED prints the newest version of PACKAGE in the
# newer suites that matches PATTERN and not REFUSED.
newest() {
	apt-cache "${apt_opts[@]}" madison "$1" 2>/dev/null | awk -F'|' '{gsub(/ /, "", $2); print $2}' |
		grep -E "$2" | { grep -Ev "$3" || true; } | sort -V | tail -n 1
}

for e in "${entries[@]}"; do
	IFS=';' read -r name pkgs pattern refused <<<"$e"
	[ -s "$cache/$name/version" ] && continue
	first=${pkgs%% *}
	ver=$(newest "$first" "$pattern" "$refused")
	[ -n "$ver" ] || die "no version of $first matching $pattern in ${suites[*]}"
	specs=()
	for p in $pkgs; do specs+=("$p=$ver"); done
	say "downloading ${specs[*]}"
	(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -qq download "${specs[@]}" >/dev/null 2>&1) ||
		(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "${specs[@]}") ||
		die "apt-get download ${specs[*]} failed"
	tmp=$(mktemp -d "$cache/.$name.XXXXXX")
	for p in $pkgs; do
		deb=$(ls "$apt_dir/debs/${p}_${ver//:/%3a}_"*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] || die "downloaded $p=$ver but its .deb is not in $apt_dir/debs"
		dpkg-deb -x "$deb" "$tmp"
	done
	echo "$ver" >"$tmp/version"
	rm -rf "${cache:?}/$name"
	mv "$tmp" "$cache/$name"
	chmod 0755 "$cache/$name"
	say "$name: $ver in $cache/$name"
done
