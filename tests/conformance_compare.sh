#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The runtime-tools validation suite against agentrun and a reference
# runtime (crun by default) on this host, one after the other, and the
# failures agentrun has that the reference does not.
#
#   RUNTIME_TOOLS_DIR=DIR tests/conformance_compare.sh [--systemd-cgroup] [VALIDATION...]
#
# --systemd-cgroup runs both runtimes with that global flag (the systemd
# cgroup driver). REFERENCE names the other runtime (default: crun).
# Prints each runtime's totals and failures and ends with "N passed, N
# failed": a validation fails when agentrun fails it and the reference
# passes it. Needs root and a runtime-tools build, as tests/conformance.sh.
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

# suite NAME BINARY: its "VALIDATION: description" failure lines.
suite() {
	local name=$1
	RUNTIME=$2 "$top/tests/conformance.sh" ${flag:+"$flag"} --out "$work/$name.out" "${@:3}" >"$work/$name.log" 2>&1 || true
	grep -E '^# (ok|not ok):' "$work/$name.log" | sed "s/^# /$name $flag: /"
	sed -n 's/^# failed: //p' "$work/$name.log" | sort -u >"$work/$name.failed"
}

suite agentrun "$top/agentrun" "$@"
suite reference "$reference" "$@"

# A validation counts against agentrun when it fails there and passes
# under the reference. Where both fail it, the checks each gets to may
# differ (one refuses at create what the other runs and then misses):
# those lines are printed for the record, not counted.
passed=0 failed=0
for tap in "$work"/agentrun.out/*.tap; do
	n=$(basename "$tap" .tap)
	ours=$(grep "^$n: " "$work/agentrun.failed" || true)
	theirs=$(grep "^$n: " "$work/reference.failed" || true)
	if [ -n "$ours" ] && [ -z "$theirs" ]; then
		failed=$((failed + 1))
		echo "# only agentrun fails: $ours"
		continue
	fi
	passed=$((passed + 1))
	[ "$ours" = "$theirs" ] || [ -z "$ours" ] || echo "# both fail $n, differently: agentrun: ${ours//$'\n'/; } | reference: ${theirs//$'\n'/; }"
done
sed 's/^/# agentrun failed: /' "$work/agentrun.failed"
sed 's/^/# reference failed: /' "$work/reference.failed"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
