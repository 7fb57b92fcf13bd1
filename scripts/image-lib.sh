# shellcheck shell=bash
# Sourced by scripts/image.sh and scripts/zk-image.sh: what their images,
# built from Debian packages without any container registry, share. The
# caller defines die and say (its own prefix) and sets suite.

# need_engine SOFT HINT: succeed when a Docker engine answers. Without one,
# exit the caller: with success (saying "no image built" and HINT) when SOFT
# is 1 (--if-engine), else with an error naming what to do.
need_engine() {
	local soft=$1 hint=${2:+; $2} info_err
	if ! command -v docker >/dev/null; then
		[ "$soft" = 1 ] && { say "no docker CLI: no image built$hint"; exit 0; }
		die "the docker CLI is not installed (apt-get install docker.io); a Docker engine is needed to build the image"
	fi
	if ! info_err=$(docker info --format '{{.ServerVersion}}' 2>&1 >/dev/null); then
		[ "$soft" = 1 ] && { say "no Docker engine answers (${info_err//$'\n'/ }): no image built$hint"; exit 0; }
		die "no Docker engine answers (docker info: ${info_err//$'\n'/ }); start dockerd or set DOCKER_HOST"
	fi
}

# need_mmdebstrap: install mmdebstrap with apt-get when missing (as root),
# and check that it can build a root file system here.
need_mmdebstrap() {
	if ! command -v mmdebstrap >/dev/null; then
		[ "$(id -u)" = 0 ] || die "mmdebstrap is missing; install it as root: apt-get install mmdebstrap"
		say "installing mmdebstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null 2>&1 ||
			{ apt-get update -qq >/dev/null 2>&1 || true; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null; } ||
			die "apt-get install mmdebstrap failed"
	fi
	[ "$(id -u)" = 0 ] || command -v unshare >/dev/null || die "not root and no unshare: mmdebstrap cannot build a root file system"
}

# mirrors prints one "deb URI SUITE main" line per Debian mirror configured
# in apt's sources (one-line .list files and deb822 .sources files), for
# $suite, $suite-updates and $suite-security.
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

# mmdebstrap_slim ARGS...: mmdebstrap's essential variant without
# documentation (copyrights kept), manuals, translations or recommends.
mmdebstrap_slim() {
	mmdebstrap --variant=essential \
		--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
		--aptopt='APT::Install-Recommends "false"' "$@"
}

# drop_older REPO PREFIX KEEP: remove REPO's images tagged PREFIX* but KEEP
# (older recipes; an image a container uses stays).
drop_older() {
	docker images --format '{{.Repository}}:{{.Tag}}' "$1" | grep -F "$1:$2" | grep -vxF "$3" |
		xargs -r docker rmi >/dev/null 2>&1 || true
}
