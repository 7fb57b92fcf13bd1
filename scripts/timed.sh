#!/usr/bin/env bash
# scripts/timed.sh LABEL CMD...: runs CMD, then prints "== LABEL: N s" (its wall
# time) whether it passed or failed, and exits with CMD's status. make test
# times its stages with it, so a slow stage shows where it stands.
label=$1
shift
start=$(date +%s)
"$@"
rc=$?
echo "== $label: $(($(date +%s) - start)) s"
exit $rc
