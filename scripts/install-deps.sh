#!/usr/bin/env bash
# Installs what zklock's tests need, only if something is missing:
#   zookeeper               ZooKeeper 3.8 server jars (zktest starts them)
#   ZooKeeper 3.9, Curator 5.7 and kazoo 2.11 from Debian's newer suites, unpacked
#                           into a cache directory beside the system's packages by
#                           scripts/fetch-newer.sh (zktest runs 3.9 by default)
#   default-jdk-headless    java and javac, unless both are already on PATH
#   libcurator-recipes-java Apache Curator, for wire-compatibility tests
#   python3-kazoo           kazoo, for wire-compatibility tests
#   postgresql              PostgreSQL's initdb and postgres, unless some
#                           /usr/lib/postgresql/<ver>/bin has both: the fence
#                           tests (internal/pgtest) start their own servers
#                           (Debian may also set up its own cluster on 5432;
#                           the tests never use it)
#   chromium                a headless browser, for zklock ui's browser tests
#   gcc                     a C compiler, unless cc or gcc is on PATH: go test -race
#                           needs cgo
#   docker-registry         a container registry the containers backend's pull test
#                           runs on 127.0.0.1 (it serves nothing else)
#   zsh, fish               the shells whose completion scripts (zklock completion)
#                           the tests load; man-db and groff-base render zklock.1
#   mmdebstrap              builds the Debian root file systems of the images
#                           (scripts/zk-image.sh, scripts/image.sh)
# Idempotent: a machine that has everything is left untouched (no apt-get
# update). Supported on Debian and Ubuntu, as root (or with passwordless
# sudo). Elsewhere it explains what to install and exits 1.
set -euo pipefail

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
if ! installed zookeeper || [ ! -f /usr/share/java/zookeeper.jar ]; then
	missing+=(zookeeper)
fi
if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
	missing+=(default-jdk-headless)
fi
if ! command -v cc >/dev/null 2>&1 && ! command -v gcc >/dev/null 2>&1; then
	missing+=(gcc)
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
	missing+=(chromium)
fi
if ! command -v docker-registry >/dev/null 2>&1; then
	missing+=(docker-registry)
fi
for p in zsh fish man-db groff-base mmdebstrap; do
	command -v "${p%-base}" >/dev/null 2>&1 || installed "$p" || missing+=("$p")
done
for p in libcurator-recipes-java python3-kazoo; do
	installed "$p" || missing+=("$p")
done
have_pg=
for d in /usr/lib/postgresql/*/bin; do
	if [ -x "$d/initdb" ] && [ -x "$d/postgres" ]; then have_pg=1; fi
done
[ -n "$have_pg" ] || missing+=(postgresql)

newer="$(dirname "$0")/fetch-newer.sh"
if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: ZooKeeper, Java, Curator, kazoo, PostgreSQL, chromium, docker-registry, a C compiler, zsh, fish, man and mmdebstrap are already installed"
	exec "$newer"
fi

if [ ! -r /etc/debian_version ] || ! command -v apt-get >/dev/null 2>&1; then
	cat >&2 <<MSG
install-deps: this is not a Debian/Ubuntu machine; missing: ${missing[*]}
Install ZooKeeper 3.8, Java 11+ and PostgreSQL yourself, then either
  - set ZKTEST_CLASSPATH to the server's jars (e.g. '/opt/zookeeper/lib/*'), or
  - point the tests at a running ensemble: ZK_SERVERS=127.0.0.1:2181 go test ./...
and either set PGTEST_BINDIR to the directory of initdb and postgres, or
point the tests at a server: PG_DSN=postgres://user@127.0.0.1:5432/db go test ./...
MSG
	exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		sudo=(sudo -n)
	else
		echo "install-deps: missing ${missing[*]}; run as root: sudo $0" >&2
		exit 1
	fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y "${missing[@]}"
"$newer"
