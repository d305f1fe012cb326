#!/bin/bash
# The runtime-tools validation suite against agentrun and a reference
# runtime (crun by default) on this host, one after the other, and the
# failures agentrun has that the reference does not.
#
#   RUNTIME_TOOLS_DIR=DIR tests/conformance_compare.sh [--systemd-cgroup] [VALIDATION...]
#
# --systemd-cgroup runs both runtimes with that global flag (the systemd
# cgroup driver). REFERENCE names the other runtime (default: crun).
# Prints each runtime's totals and ends with "N passed, N failed": a
# validation passes when agentrun has no failure there that the reference
# lacks. Needs root and a runtime-tools build, as tests/conformance.sh.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
flag=""
if [ "${1:-}" = --systemd-cgroup ]; then
	flag=--systemd-cgroup
	shift
fi
reference=$(command -v "${REFERENCE:-crun}") || { echo "conformance_compare: no ${REFERENCE:-crun}" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/conformance-compare.XXXXXX")
trap 'rm -rf --one-file-system "$work"' EXIT

# wrapper NAME BINARY: a runtime path that adds the driver flag.
wrapper() {
	printf '#!/bin/sh\nexec %q %s "$@"\n' "$2" "$flag" >"$work/$1"
	chmod 755 "$work/$1"
	echo "$work/$1"
}

# suite NAME BINARY: its "VALIDATION: description" failure lines.
suite() {
	local name=$1 runtime
	runtime=$(wrapper "$name" "$2")
	RUNTIME=$runtime "$top/tests/conformance.sh" --out "$work/$name.out" "${@:3}" >"$work/$name.log" 2>&1 || true
	grep -E '^# (ok|not ok):' "$work/$name.log" | sed "s/^# /$name $flag: /"
	sed -n 's/^# failed: //p' "$work/$name.log" | sort -u >"$work/$name.failed"
}

suite agentrun "$top/agentrun" "$@"
suite reference "$reference" "$@"

# Validations with a failure only agentrun has. A validation that stops
# early under the reference (exit status) hides its later checks, so it
# counts as failing there as a whole.
passed=0 failed=0
for tap in "$work"/agentrun.out/*.tap; do
	n=$(basename "$tap" .tap)
	extra=$({ grep "^$n: " "$work/agentrun.failed" || true; } | while IFS= read -r line; do
		grep -qxF "$line" "$work/reference.failed" || grep -q "^$n: exit status" "$work/reference.failed" || echo "$line"
	done)
	if [ -n "$extra" ]; then
		failed=$((failed + 1))
		echo "# only agentrun fails: $extra"
	else
		passed=$((passed + 1))
	fi
done
sed 's/^/# agentrun failed: /' "$work/agentrun.failed"
sed 's/^/# reference failed: /' "$work/reference.failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
